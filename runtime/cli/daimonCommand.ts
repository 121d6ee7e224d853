import { findSoul, requestControl } from "../node/index.ts";
import type { DaimonModeReply } from "../node/index.ts";
import { print, withBus, type ClusterTarget } from "./clusterTarget.ts";

/** `ensoul daimon <soul> <mode>`: switches the soul's daimons on the node hosting it. */
export async function daimonCommand(target: ClusterTarget & { soul: string; mode: string; name?: string }): Promise<DaimonModeReply> {
  return withBus(target, "daimon", async (bus) => {
    const where = await findSoul(bus, target.soul);
    const reply = await requestControl<DaimonModeReply>(bus, where.status.node, "daimon", { soulId: target.soul, mode: target.mode, ...(target.name ? { name: target.name } : {}) });
    for (const d of reply.daimons) print(target, `daimon ${d.name} of ${d.soul}: ${d.mode}`);
    return reply;
  });
}

