/**
 * A soul with tools in a child process: `node --import tsx toolOrderChild.ts <dir> <soulId> <sideEffects> <order>`,
 * with `ENSOUL_FAULTS` naming where it is killed (runtime/faults). It takes the perception
 * "p-pay" and runs its turn; if no fault killed it, it prints NO_CRASH and exits.
 */
import { createSoul } from "../../../actors/soul/index.ts";
import { openStore } from "../../../runtime/store/index.ts";
import { toolOrderBlueprint, toolOrderTools, type ToolOrder } from "./toolOrderSoul.ts";

const [dir, soulId, sideEffects, order] = process.argv.slice(2);
const store = openStore({ path: dir });
const soul = createSoul({ blueprint: toolOrderBlueprint(order as ToolOrder), id: soulId, store, services: { tools: toolOrderTools(sideEffects) } });
await soul.perceive({ action: "said", content: "pay", name: "Ada", id: "p-pay" });
await soul.idle();
process.stdout.write("NO_CRASH\n");
await soul.stop();
await store.close();
