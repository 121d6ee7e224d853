/**
 * Bridges: souls where people talk. Each `bridges` entry of the cluster config
 * (`{type, soul, node?, options?}`) starts one, hosted by the node its soul is on:
 * slack/ (@slack/bolt), discord/ (discord.js), http/ (docs/HTTP.md), and terminal/ (`ensoul chat`).
 * They import the actors and the kernel; nothing below them imports a bridge.
 */
import type { BridgeHandle, BridgeStartContext, StartBridge } from "./core/index.ts";
import { startDiscordBridge } from "./discord/index.ts";
import { startHttpBridge } from "./http/index.ts";
import { startSlackBridge } from "./slack/index.ts";

export * from "./core/index.ts";

const STARTS: Partial<Record<BridgeStartContext["entry"]["type"], StartBridge>> = {
  slack: startSlackBridge,
  discord: startDiscordBridge,
  http: startHttpBridge,
};

/** The bridge's name on its node: `options.name`, else `<type>-<soul>`. */
export function bridgeName(entry: BridgeStartContext["entry"]): string {
  const named = entry.options?.["name"];
  return typeof named === "string" && named ? named : `${entry.type}-${entry.soul}`;
}

/** Starts the bridge a config entry describes; rejects with the reason it cannot run (a missing token, a port taken). */
export function startBridge(ctx: BridgeStartContext): Promise<BridgeHandle> {
  const start = STARTS[ctx.entry.type];
  if (!start) {
    const hint = ctx.entry.type === "terminal" ? "the terminal is `ensoul chat <soul>`, not a hosted bridge" : "this type has no bridge yet";
    return Promise.reject(new Error(`bridge ${ctx.name}: ${hint}`));
  }
  return start(ctx);
}
