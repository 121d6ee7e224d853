/**
 * A soul with tools in a child process: `node --import tsx toolCrashChild.ts <dir> <soulId> <sideEffects>`.
 * It takes the perception "write", whose turn calls `notes` twice; the second call hangs after
 * its side effect, the child prints IN_TOOL, and waits to be killed with SIGKILL.
 */
import { createSoul } from "../../../actors/soul/index.ts";
import { openStore } from "../../../runtime/store/index.ts";
import { toolCrashBlueprint, toolCrashTools } from "./toolCrashSoul.ts";

const [dir, soulId, sideEffects] = process.argv.slice(2);
const store = openStore({ path: dir });
const soul = createSoul({
  blueprint: toolCrashBlueprint,
  id: soulId,
  store,
  services: { tools: toolCrashTools({ sideEffects, hangOnSecond: () => process.stdout.write("IN_TOOL\n") }) },
});
await soul.perceive({ action: "said", content: "write", name: "Ada", id: "p-write" });
setInterval(() => undefined, 1_000);
