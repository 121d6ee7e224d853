/**
 * How a node or a CLI command reaches NATS: server URL(s) and one of user/password, token
 * or NKey seed. `connectClusterBus` turns the client's connection failures into the one line
 * a user can act on (`cannot reach NATS at nats://127.0.0.1:4999 (connection refused)`).
 */
import { credsAuthenticator, nkeyAuthenticator, type ConnectionOptions } from "@nats-io/transport-node";
import { connectNatsBus, redactSecrets, type Bus, type NatsBusOptions } from "../bus/index.ts";

export interface NatsConnectOptions {
  servers: string | string[];
  user?: string;
  pass?: string;
  token?: string;
  /** An NKey user seed (`SU...`). */
  nkeySeed?: string;
  /** The text of a NATS `.creds` file: a user JWT and its NKey seed. */
  creds?: string;
  /** Pause between reconnect attempts (attempts never stop). */
  reconnectTimeWaitMs?: number;
  /**
   * Prefix of this user's reply inboxes, for servers with per-user inbox permissions
   * (docs/SECURITY.md 2.3, `inboxPrefixFor(user)`); default `_INBOX`.
   */
  inboxPrefix?: string;
}

export class NatsUnreachableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NatsUnreachableError";
  }
}

/** The server list as it may be printed: credentials in a URL redacted. */
export function serversText(servers: string | string[]): string {
  return redactSecrets(Array.isArray(servers) ? servers.join(", ") : servers);
}

/** Options for a raw connection of the official client, with the same credentials the bus uses. */
export function natsConnectionOptions(o: NatsConnectOptions, name: string): ConnectionOptions {
  const opts: ConnectionOptions = {
    servers: o.servers,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: o.reconnectTimeWaitMs ?? 250,
    // As the bus: no stack captured up front for every request and pull.
    noAsyncTraces: true,
  };
  if (o.user !== undefined) opts.user = o.user;
  if (o.pass !== undefined) opts.pass = o.pass;
  if (o.token !== undefined) opts.token = o.token;
  if (o.inboxPrefix !== undefined) opts.inboxPrefix = o.inboxPrefix;
  if (o.nkeySeed !== undefined) opts.authenticator = nkeyAuthenticator(new TextEncoder().encode(o.nkeySeed.trim()));
  if (o.creds !== undefined) opts.authenticator = credsAuthenticator(new TextEncoder().encode(o.creds));
  return opts;
}

/** Why a connection failed, in a few words. */
export function connectFailure(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: { code?: string; message?: string } } | undefined;
  const code = e?.cause?.code ?? e?.code;
  const text = `${e?.message ?? ""} ${e?.cause?.message ?? ""}`;
  if (code === "ECONNREFUSED" || /connection refused/i.test(text)) return "connection refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || /ENOTFOUND|getaddrinfo/.test(text)) return "unknown host";
  if (/authorization|authentication/i.test(text)) return "authorization failed: check the NATS user and password, token, --creds or --nkey-seed-file";
  if (/timeout/i.test(text)) return "timed out";
  const detail = (e?.message ?? String(err)).replace(/^could not connect to NATS at [^:]+(?::\/\/[^:]+(?::\d+)?)?: /, "");
  return redactSecrets(detail.split("\n")[0]).slice(0, 200);
}

/** The bus of a cluster on NATS, or a NatsUnreachableError with one clear line. */
export async function connectClusterBus(o: NatsConnectOptions & { cluster: string; name?: string } & Pick<NatsBusOptions, "onHandlerError" | "publishTimeoutMs" | "replicas">): Promise<Bus> {
  const opts: NatsBusOptions = { servers: o.servers, cluster: o.cluster, reconnectTimeWaitMs: o.reconnectTimeWaitMs ?? 250 };
  if (o.name !== undefined) opts.name = o.name;
  if (o.user !== undefined) opts.user = o.user;
  if (o.pass !== undefined) opts.pass = o.pass;
  if (o.token !== undefined) opts.token = o.token;
  if (o.nkeySeed !== undefined) opts.nkeySeed = o.nkeySeed.trim();
  if (o.creds !== undefined) opts.creds = o.creds;
  if (o.inboxPrefix !== undefined) opts.inboxPrefix = o.inboxPrefix;
  if (o.onHandlerError) opts.onHandlerError = o.onHandlerError;
  if (o.publishTimeoutMs !== undefined) opts.publishTimeoutMs = o.publishTimeoutMs;
  if (o.replicas !== undefined) opts.replicas = o.replicas;
  try {
    return await connectNatsBus(opts);
  } catch (err) {
    const connected = !(err instanceof Error && err.message.startsWith("could not connect"));
    // Connected, but the stream could not be set up (JetStream off, permissions): say that instead.
    if (connected) throw new NatsUnreachableError(`NATS at ${serversText(o.servers)} cannot serve cluster '${o.cluster}': ${redactSecrets((err as Error).message.split("\n")[0])}`, { cause: err });
    throw new NatsUnreachableError(`cannot reach NATS at ${serversText(o.servers)} (${connectFailure(err)})`, { cause: err });
  }
}
