/**
 * The HTTP bridge: a soul on the web, for any client that speaks HTTP (docs/HTTP.md). Its
 * "platform" is this node's own server, so it is online once it listens. Bridges on the same
 * host and port share one server.
 */
import { runtimeFor, statusOf, type BridgeHandle, type BridgeStartContext } from "../core/index.ts";
import { EphemeralFeed } from "./EphemeralFeed.ts";
import { HttpBridgeServer } from "./HttpBridgeServer.ts";
import { parseHttpOptions, type HttpBridgeOptions } from "./httpOptions.ts";
import { SpeechLog } from "./SpeechLog.ts";

/** Servers by `host:port`, while a bridge uses them (port 0: each bridge its own). */
const servers = new Map<string, { server: Promise<HttpBridgeServer>; users: number }>();

async function serverFor(key: string | undefined, open: () => Promise<HttpBridgeServer>): Promise<{ server: HttpBridgeServer; release(): Promise<void> }> {
  if (key === undefined) {
    const server = await open();
    return { server, release: () => server.close() };
  }
  let shared = servers.get(key);
  if (!shared) {
    shared = { server: open(), users: 0 };
    servers.set(key, shared);
    shared.server.catch(() => servers.delete(key));
  }
  shared.users++;
  const entry = shared;
  return {
    server: await entry.server,
    async release() {
      if (--entry.users > 0) return;
      servers.delete(key as string);
      await (await entry.server).close();
    },
  };
}

/** What the server takes from the first bridge that opens it. */
function serverOptions({ host, port, rateLimit, maxConnections, maxStreams }: HttpBridgeOptions) {
  return { host, port, rateLimit, maxConnections, maxStreams };
}

export async function startHttpBridge(ctx: BridgeStartContext): Promise<BridgeHandle> {
  const options = parseHttpOptions(ctx.entry.options);
  const token = ctx.env["ENSOUL_HTTP_TOKEN"];
  if (!token) throw new Error(`http bridge ${ctx.name}: set ENSOUL_HTTP_TOKEN (the bearer token its clients send); it is never printed`);
  const runtime = runtimeFor(ctx, options.policy, { publishPoint: "http.publish", ...(options.ledger ? { ledger: options.ledger } : {}) });
  const log = new SpeechLog(ctx.store, runtime.address, { keep: options.speechLog.keep, report: (err, what) => runtime.report(err, what), posted: () => runtime.count("posted") });
  let held: { server: HttpBridgeServer; release(): Promise<void> } | undefined;
  const ephemeral = new EphemeralFeed(ctx.bus, ctx.subjects, ctx.entry.soul);
  try {
    await runtime.follow(log);
    held = await serverFor(options.port === 0 ? undefined : `${options.host}:${options.port}`, () =>
      HttpBridgeServer.listen({ ...serverOptions(options), token, onError: (err, what) => runtime.report(err, what) }),
    );
    held.server.add({ soul: ctx.entry.soul, runtime, log, maxBodyBytes: options.maxBodyBytes, ephemeral, ready: () => runtime.state === "online", ...(ctx.whisper ? { whisper: ctx.whisper } : {}) });
  } catch (err) {
    runtime.failed(err instanceof Error ? err.message : String(err));
    ephemeral.close();
    await held?.release().catch(() => undefined);
    await runtime.stop().catch(() => undefined);
    throw err;
  }
  runtime.connected();
  const server = held.server;
  const release = held.release;
  ctx.info(`http bridge ${ctx.name}: soul ${ctx.entry.soul} at ${server.url}/v1/souls/${ctx.entry.soul}/`);
  return {
    name: ctx.name,
    runtime,
    status: () => statusOf(runtime, { url: `${server.url}/v1/souls/${ctx.entry.soul}/` }),
    async stop() {
      server.remove(ctx.entry.soul);
      ephemeral.close();
      await release();
      await runtime.stop();
    },
  };
}
