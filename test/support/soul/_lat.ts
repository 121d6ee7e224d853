import { mkdtempSync } from "node:fs"; import { tmpdir } from "node:os"; import { join } from "node:path";
import { openStore } from "../../../runtime/store/index.ts";
import { percentile } from "../../bench/BenchRow.ts";
const store = openStore({ path: mkdtempSync(join(tmpdir(), "lat-")), noSync: true });
const a = store.actor("x"); const b = store.actor("y");
const one: number[] = [], two: number[] = [];
for (let i = 0; i < 2000; i++) {
  const t0 = performance.now();
  await a.receive(`p${i}`, { id: `p${i}`, action: "said", content: "m", name: "Ada", ts: 1 });
  const t1 = performance.now();
  await a.commitTurn({ inboxDone: `p${i}`, state: { workingMemory: { soulName: "B", memories: [], regionOrder: [] }, soulMemory: {}, processMemory: {}, currentProcess: "t", invocationCounts: {}, turn: i + 1, metadata: {} } });
  const t2 = performance.now();
  one.push(t1 - t0); two.push(t2 - t0);
}
console.log("receive p50", percentile(one, 50).toFixed(3), "receive+commit p50", percentile(two, 50).toFixed(3));
await store.close();
