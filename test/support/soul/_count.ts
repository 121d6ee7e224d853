import { createHook } from "node:async_hooks";
import { createMemoryActorStore } from "../../../actors/soul/memoryActorStore.ts";
import { createSoul, defineSoul, type MentalProcess } from "../../../actors/soul/index.ts";
const trivial: MentalProcess = async ({ workingMemory }) => workingMemory;
const blueprint = defineSoul({ name: "Bench", persona: "A soul that only listens.", initialProcess: trivial, processes: { trivial } });
const soul = createSoul({ blueprint, id: `c`, store: createMemoryActorStore(`c`) });
for (let i = 0; i < 50; i++) { await soul.perceive({ action: "said", content: `m ${i}`, name: "Ada" }); await soul.idle(); }
let promises = 0;
const hook = createHook({ init(_id, type) { if (type === "PROMISE") promises++; } }).enable();
const N = 200;
for (let i = 0; i < N; i++) { await soul.perceive({ action: "said", content: `m ${i}`, name: "Ada" }); await soul.idle(); }
hook.disable();
console.log("promises per turn", promises / N);
