import { mkdtempSync } from "node:fs"; import { tmpdir } from "node:os"; import { join } from "node:path";
import { openStore } from "../../../runtime/store/index.ts";
import { createSoul, defineSoul, type MentalProcess } from "../../../actors/soul/index.ts";
import type { ActorStore } from "../../../runtime/store/types.ts";
const marks: Record<string, number[]> = {};
let t0 = 0;
const mark = (k: string) => (marks[k] ??= []).push(performance.now() - t0);
const trivial: MentalProcess = async ({ workingMemory }) => { mark("process"); return workingMemory.slice(-5); };
const blueprint = defineSoul({ name: "Bench", persona: "p", initialProcess: trivial, processes: { trivial } });
const store = openStore({ path: mkdtempSync(join(tmpdir(), "tl-")), noSync: true });
const real = store.actor("s");
const wrapped: ActorStore = Object.assign(Object.create(Object.getPrototypeOf(real)), real);
const proxy = new Proxy(real, { get(t, k) {
  const v = Reflect.get(t, k, t);
  if (k === "receive") return (...a: [string, unknown]) => { mark("receive-call"); return t.receive(...a).then((r) => { mark("receive-done"); return r; }); };
  if (k === "commitTurn") return (c: Parameters<ActorStore["commitTurn"]>[0]) => { mark("commit-call"); return t.commitTurn(c).then(() => mark("commit-done")); };
  return typeof v === "function" ? v.bind(t) : v;
} });
void wrapped;
const soul = createSoul({ blueprint, id: "s", store: proxy });
const origSend = soul.actor.send.bind(soul.actor);
(soul.actor as { send: typeof origSend }).send = (e) => { mark("send-" + e.type); origSend(e); mark("sent-" + e.type); };
for (let i = 0; i < 300; i++) { t0 = performance.now(); await soul.perceive({ action: "said", content: "m", name: "A" }); mark("perceive-resolved"); await soul.idle(); mark("idle"); }
const med = (a: number[]) => a.slice(100).sort((x, y) => x - y)[Math.floor((a.length - 100) / 2)].toFixed(3);
for (const [k, v] of Object.entries(marks)) console.log(k.padEnd(20), med(v));
await soul.stop(); await store.close();
