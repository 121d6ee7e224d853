import { createMemoryActorStore } from "../../../actors/soul/memoryActorStore.ts";
import { createSoul, defineSoul, type MentalProcess, type Soul } from "../../../actors/soul/index.ts";
const trivial: MentalProcess = async ({ workingMemory }) => workingMemory;
const blueprint = defineSoul({ name: "Bench", persona: "A soul that only listens.", initialProcess: trivial, processes: { trivial } });
const rates: number[] = []; const cpus: number[] = [];
for (let round = 0; round < 6; round++) {
  const all: Soul[] = [];
  for (let s = 0; s < 1000; s++) all.push(createSoul({ blueprint, id: `tp-${s}`, store: createMemoryActorStore(`tp-${s}`) }));
  const start = performance.now(); const cpu0 = process.cpuUsage();
  await Promise.all(all.map(async (soul) => { for (let i = 0; i < 10; i++) await soul.perceive({ action: "said", content: `m ${i}`, name: "Ada" }); await soul.idle(); }));
  const c = process.cpuUsage(cpu0); cpus.push((c.user + c.system) / 10000);
  rates.push(10000 / ((performance.now() - start) / 1000));
  await Promise.all(all.map((x) => x.stop()));
}
console.log("memory-store turns/s", rates.map((r) => r.toFixed(0)).join(" "), "cpu us/turn", cpus.map((r) => r.toFixed(0)).join(" "));
