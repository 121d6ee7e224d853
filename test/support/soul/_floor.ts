import { mkdtempSync } from "node:fs"; import { tmpdir } from "node:os"; import { join } from "node:path";
import { openStore } from "../../../runtime/store/index.ts";
const store = openStore({ path: mkdtempSync(join(tmpdir(), "floor-")), noSync: true });
for (let round = 0; round < 3; round++) {
  const start = performance.now();
  await Promise.all(Array.from({ length: 1000 }, async (_, s) => {
    const a = store.actor(`f-${round}-${s}`);
    const memories: unknown[] = [];
    for (let i = 0; i < 10; i++) {
      const id = `p${i}`;
      await a.receive(id, { id, action: "said", content: `m ${i}`, name: "Ada", ts: Date.now() });
      memories.push({ id: crypto.randomUUID(), role: "user", content: `Ada said: "m ${i}"`, name: "Ada", timestamp: Date.now(), metadata: { perceptionId: id } });
      await a.commitTurn({ inboxDone: id, state: { workingMemory: { soulName: "B", memories: [...memories], regionOrder: [] }, soulMemory: {}, processMemory: { trivial: [] }, currentProcess: "trivial", invocationCounts: { trivial: i + 1 }, turn: i + 1, snapshot: { status: "active", value: { trivial: "idle" }, historyValue: {}, context: { current: "trivial", queue: [], perception: null, chain: 0, runParams: null, nextParams: null, stopping: false }, children: {} }, metadata: {} } });
    }
  }));
  console.log("floor turns/s", 10000 / ((performance.now() - start) / 1000));
}
await store.close();
