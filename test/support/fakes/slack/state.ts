/**
 * The fake Slack's workspace state: its identities, the messages in each channel (with their
 * threads, edits and reactions), the log of Web API calls and the queued faults. Shapes follow
 * Slack's message objects as `conversations.history` / `conversations.replies` return them
 * (docs.slack.dev/reference/objects/message-object, @slack/web-api's MessageElement type).
 */

/** Who the fake says it is, and who else is in the workspace. */
export interface FakeSlackOptions {
  botToken?: string;
  appToken?: string;
  teamId?: string;
  teamName?: string;
  botUserId?: string;
  botId?: string;
  appId?: string;
  botName?: string;
  /** The workspace's people, for `users.info`: `{ U123: { name: "ada", real_name: "Ada" } }`. */
  users?: Record<string, FakeUser>;
  /** How long `sendEvent` waits for the envelope's ack (Slack itself waits 3 s). Default 3000. */
  ackTimeoutMs?: number;
  /** When set, the server pings every socket this often, as Slack does (off by default). */
  serverPingIntervalMs?: number;
  /** The seconds part of the first `ts` handed out. Default 1700000000. */
  tsEpoch?: number;
}

export interface FakeUser {
  name: string;
  real_name?: string;
  display_name?: string;
  is_bot?: boolean;
}

export interface Identity {
  botToken: string;
  appToken: string;
  teamId: string;
  teamName: string;
  botUserId: string;
  botId: string;
  appId: string;
  botName: string;
  users: Record<string, FakeUser>;
}

export interface Reaction {
  name: string;
  users: string[];
  count: number;
}

export interface MessageMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

export interface MessageEdit {
  /** The text before this edit. */
  previousText: string;
  text: string;
  /** The `edited.ts` Slack stamps on the message. */
  ts: string;
}

/** One message as the fake holds it. `origin` says whether the app posted it or an event brought it. */
export interface StoredMessage {
  channel: string;
  ts: string;
  text: string;
  origin: "api" | "event";
  user?: string;
  bot_id?: string;
  app_id?: string;
  subtype?: string;
  thread_ts?: string;
  metadata?: MessageMetadata;
  username?: string;
  icon_emoji?: string;
  icon_url?: string;
  blocks?: unknown[];
  attachments?: unknown[];
  reply_broadcast?: boolean;
  client_msg_id?: string;
  edited?: { user: string; ts: string };
  edits: MessageEdit[];
  reactions: Reaction[];
  deleted: boolean;
}

/** One Web API call as the fake received it. */
export interface ApiCall {
  method: string;
  /** The parsed arguments (JSON-string fields like `metadata` already parsed), without `token`. */
  args: Record<string, unknown>;
  time: number;
  /** The HTTP status sent back: 200, or 429 when rate limited. */
  status: number;
  ok: boolean;
  error?: string;
}

export type Fault = { kind: "ratelimit"; retryAfterSeconds: number } | { kind: "fail"; error: string };

/** Slack's `ts`: seconds, a dot, six digits; the fake's only ever grow. */
export class TsClock {
  private count = 0;
  constructor(private readonly epoch = 1_700_000_000) {}

  next(): string {
    this.count += 1;
    const micros = this.count * 100;
    const seconds = this.epoch + Math.floor(micros / 1_000_000);
    return `${seconds}.${String(micros % 1_000_000).padStart(6, "0")}`;
  }

  /** The seconds of the latest `ts`, for `event_time`. */
  seconds(): number {
    return this.epoch + Math.floor((this.count * 100) / 1_000_000);
  }
}

export function identityFrom(options: FakeSlackOptions): Identity {
  return {
    botToken: options.botToken ?? "xoxb-test",
    appToken: options.appToken ?? "xapp-test",
    teamId: options.teamId ?? "T0001",
    teamName: options.teamName ?? "Fake Team",
    botUserId: options.botUserId ?? "U0BOT",
    botId: options.botId ?? "B0BOT",
    appId: options.appId ?? "A0APP",
    botName: options.botName ?? "fakebot",
    users: options.users ?? {},
  };
}

export class SlackState {
  readonly identity: Identity;
  readonly clock: TsClock;
  private readonly store: StoredMessage[] = [];
  private readonly callLog: ApiCall[] = [];
  private readonly faults = new Map<string, Fault[]>();
  private readonly listeners = new Set<() => void>();

  constructor(options: FakeSlackOptions) {
    this.identity = identityFrom(options);
    this.clock = new TsClock(options.tsEpoch);
  }

  // ----- change notification (for waitFor)

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  // ----- messages

  add(message: Omit<StoredMessage, "edits" | "reactions" | "deleted">): StoredMessage {
    const stored: StoredMessage = { ...message, edits: [], reactions: [], deleted: false };
    this.store.push(stored);
    this.changed();
    return stored;
  }

  find(channel: string, ts: string): StoredMessage | undefined {
    return this.store.find((m) => m.channel === channel && m.ts === ts && !m.deleted);
  }

  /** Every live message (both origins), oldest first. */
  all(channel?: string): StoredMessage[] {
    return this.store.filter((m) => !m.deleted && (channel === undefined || m.channel === channel)).sort(byTs);
  }

  /** A thread: its root, then its replies, oldest first; undefined when `ts` is no message. */
  thread(channel: string, ts: string): StoredMessage[] | undefined {
    const hit = this.find(channel, ts);
    if (!hit) return undefined;
    const rootTs = hit.thread_ts ?? hit.ts;
    const root = this.find(channel, rootTs);
    const replies = this.all(channel).filter((m) => m.thread_ts === rootTs && m.ts !== rootTs);
    return root ? [root, ...replies] : replies;
  }

  repliesTo(channel: string, rootTs: string): StoredMessage[] {
    return this.all(channel).filter((m) => m.thread_ts === rootTs && m.ts !== rootTs);
  }

  // ----- calls and faults

  logCall(call: ApiCall): void {
    this.callLog.push(call);
    this.changed();
  }

  calls(method?: string): ApiCall[] {
    return this.callLog.filter((c) => method === undefined || c.method === method);
  }

  queueFault(method: string, fault: Fault, times: number): void {
    const queue = this.faults.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(fault);
    this.faults.set(method, queue);
  }

  takeFault(method: string): Fault | undefined {
    return this.faults.get(method)?.shift();
  }
}

/** Orders Slack `ts` strings exactly (a double would blur the microseconds). */
export function compareTs(a: string, b: string): number {
  const [as, af = ""] = a.split(".");
  const [bs, bf = ""] = b.split(".");
  return Number(as) - Number(bs) || af.padEnd(6, "0").localeCompare(bf.padEnd(6, "0"));
}

function byTs(a: StoredMessage, b: StoredMessage): number {
  return compareTs(a.ts, b.ts);
}
