/**
 * A process that inspects a soul through the WebSocket inspector and then simply ends its
 * work: `node --import tsx inspectedChild.ts <ws-url> <forget|stop>`. With `forget` it never
 * stops the inspection; with `stop` it stops it while the socket may still be connecting.
 * Either way the process must exit on its own: the inspector may not hold it open.
 */
import { createInspection } from "../../../runtime/inspect/inspection.ts";
import { createMemoryActorStore } from "../../../actors/soul/memoryActorStore.ts";
import { createSoul, defineSoul, type MentalProcess } from "../../../actors/soul/index.ts";

const [url, how] = process.argv.slice(2);
const inspection = createInspection({ mode: "ws", url });
const chat: MentalProcess = ({ workingMemory }) => workingMemory;
const soul = createSoul({
  blueprint: defineSoul({ name: "Child", persona: "", initialProcess: chat, processes: { chat } }),
  id: "child",
  store: createMemoryActorStore("child"),
  inspect: inspection.inspect,
});
await soul.perceive({ action: "said", content: "hi", name: "Ada" });
await soul.idle();
if (how === "stop") {
  await soul.stop();
  await inspection.stop();
} else {
  // Connected and reporting; then the soul stops and nobody stops the inspection. (The
  // interval only keeps this script waiting for the connection: the socket itself would not.)
  const waiting = setInterval(() => undefined, 1000);
  await inspection.ready();
  clearInterval(waiting);
  await soul.stop();
}
process.stdout.write("done\n");
