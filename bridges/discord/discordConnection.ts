/**
 * discord.js's gateway connection, shown on the bridge machine. discord.js reconnects and
 * RESUMEs by itself; the bridge only reports what it sees, so `ensoul status` and the
 * inspector show `reconnecting` while Discord is away and `online` once it is back:
 *
 *   ShardReady (a new session: READY and its guilds) / ShardResume  -> connected
 *   ShardReconnecting (a close discord.js recovers from)             -> disconnected
 *   ShardDisconnect (a close it does not: 4004 bad token, 4014
 *     disallowed intents...)                                        -> failed: it will not come back
 *   ShardError, Error                                               -> reported
 */
import { Events, type Client, type CloseEvent } from "discord.js";
import type { BridgeRuntime } from "../core/index.ts";

/** Follows the client's connection into the runtime's machine; returns the unfollow. */
export function watchConnection(client: Client, runtime: BridgeRuntime): () => void {
  const connected = () => runtime.connected();
  const reconnecting = (shardId: number) => runtime.disconnected(`the gateway connection (shard ${shardId}) was lost; discord.js is reconnecting`);
  const disconnected = (event: CloseEvent, shardId: number) =>
    runtime.failed(`the gateway closed shard ${shardId} with code ${event.code}, after which discord.js does not reconnect (a revoked token, disallowed intents?)`);
  const error = (err: Error, shardId: number) => runtime.report(err, `gateway error on shard ${shardId}`);
  // An EventEmitter "error" with no listener throws: discord.js's would take the node down.
  const clientError = (err: Error) => runtime.report(err, "discord.js");
  client.on(Events.ShardReady, connected);
  client.on(Events.ShardResume, connected);
  client.on(Events.ShardReconnecting, reconnecting);
  client.on(Events.ShardDisconnect, disconnected);
  client.on(Events.ShardError, error);
  client.on(Events.Error, clientError);
  return () => {
    client.off(Events.ShardReady, connected);
    client.off(Events.ShardResume, connected);
    client.off(Events.ShardReconnecting, reconnecting);
    client.off(Events.ShardDisconnect, disconnected);
    client.off(Events.ShardError, error);
    client.off(Events.Error, clientError);
  };
}
