/** The Slack bridge (@slack/bolt): Socket Mode or the HTTP Events API. */
import type { BridgeHandle, BridgeStartContext } from "../core/index.ts";

export async function startSlackBridge(ctx: BridgeStartContext): Promise<BridgeHandle> {
  throw new Error(`bridge ${ctx.name}: the Slack bridge is not built yet`);
}
