/**
 * A soul in a child process, for the crash test: `node --import tsx crashChild.ts <dir> <soulId>`.
 * It answers "hello" (its speech is committed but the outlet never acknowledges it), then
 * starts a turn on "slow" that never ends, prints IN_TURN and, once the perception is
 * accepted, ACCEPTED, and waits to be killed with SIGKILL.
 */
import { openStore } from "../../../runtime/store/index.ts";
import { createSoul } from "../../../actors/soul/index.ts";
import { crashBlueprint } from "./crashBlueprint.ts";

const [dir, soulId] = process.argv.slice(2);
const store = openStore({ path: dir });
const soul = createSoul({
  blueprint: crashBlueprint({ hangOn: "slow", onHang: () => process.stdout.write("IN_TURN\n") }),
  id: soulId,
  store,
  // The bridge is "down": nothing is ever acknowledged, so the outbox keeps the speech.
  outlet: { deliver: () => new Promise<void>(() => undefined) },
});
soul.onEvent((event) => {
  if (event.type === "turn") process.stdout.write(`TURN ${event.turn}\n`);
});
await soul.perceive({ action: "said", content: "hello", name: "Ada", id: "p-hello" });
await new Promise<void>((resolve) => {
  const off = soul.onEvent((event) => {
    if (event.type === "turn") {
      off();
      resolve();
    }
  });
});
await soul.perceive({ action: "said", content: "slow", name: "Ada", id: "p-slow" });
// Resolved: the perception is in the inbox, the promise a caller acknowledges on. Its turn
// may have started before that (it runs while the inbox write syncs), so the test waits for both.
process.stdout.write("ACCEPTED\n");
setInterval(() => undefined, 1_000);
