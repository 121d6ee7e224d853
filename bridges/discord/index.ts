/** The Discord bridge (discord.js). */
import type { BridgeHandle, BridgeStartContext } from "../core/index.ts";

export async function startDiscordBridge(ctx: BridgeStartContext): Promise<BridgeHandle> {
  throw new Error(`bridge ${ctx.name}: the Discord bridge is not built yet`);
}
