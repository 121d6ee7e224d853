import { mkdtempSync } from "node:fs"; import { tmpdir } from "node:os"; import { join } from "node:path";
import { openStore } from "../../../runtime/store/index.ts";
import { createSoul, defineSoul, type MentalProcess, type Soul } from "../../../actors/soul/index.ts";
const trivial: MentalProcess = async ({ workingMemory }) => workingMemory;
const blueprint = defineSoul({ name: "Bench", persona: "A soul that only listens.", initialProcess: trivial, processes: { trivial } });
const store = openStore({ path: mkdtempSync(join(tmpdir(), "prof-")), noSync: true });
for (let round = 0; round < 3; round++) {
  const all: Soul[] = [];
  for (let s = 0; s < 1000; s++) all.push(createSoul({ blueprint, id: `tp-${round}-${s}`, store: store.actor(`tp-${round}-${s}`) }));
  const start = performance.now();
  await Promise.all(all.map(async (soul) => { for (let i = 0; i < 10; i++) await soul.perceive({ action: "said", content: `m ${i}`, name: "Ada" }); await soul.idle(); }));
  const s = (performance.now() - start) / 1000;
  console.log("turns/s", 10000 / s);
  await Promise.all(all.map((x) => x.stop()));
}
await store.close();
