/**
 * For the store's crash test: `node --import tsx crashChild.ts <dir>` commits turns of the
 * actor "crashy" as fast as it can, resuming from whatever turn the store holds, and prints
 * `COMMITTED <turn>` after each commit resolves, until the parent kills it with SIGKILL.
 *
 * Each turn receives `p-<turn>`, then commits the deterministic state `crashState(turn)`,
 * marks `p-<turn>` done and adds two outbox entries, so the parent can tell a whole turn
 * from a torn one.
 */
import { openStore } from "../../../runtime/store/index.ts";
import { crashState, sampleOutbox } from "./fixtures.ts";

const dir = process.argv[2];
if (!dir) throw new Error("usage: crashChild.ts <dir>");
const actor = openStore({ path: dir }).actor("crashy");
let turn = actor.loadState()?.turn ?? 0;
process.stdout.write(`START ${turn}\n`);
for (;;) {
  turn += 1;
  await actor.receive(`p-${turn}`, { content: `message ${turn}` });
  await actor.commitTurn({ state: crashState(turn), inboxDone: `p-${turn}`, outbox: [sampleOutbox(turn, 0), sampleOutbox(turn, 1)] });
  process.stdout.write(`COMMITTED ${turn}\n`);
}
