import { requestControl } from "../node/index.ts";
import type { StopReply } from "../node/index.ts";
import { print, withBus, type ClusterTarget } from "./clusterTarget.ts";

/** `ensoul stop <node>`: asks a node to drain and exit. */
export async function stopCommand(target: ClusterTarget & { node: string }): Promise<void> {
  await withBus(target, "stop", async (bus) => {
    const reply = await requestControl<StopReply>(bus, target.node, "stop");
    print(target, `node ${reply.node} is stopping`);
  });
}

