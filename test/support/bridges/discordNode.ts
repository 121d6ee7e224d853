/**
 * A real node running the Discord bridge against the fake Discord (test/support/fakes/discord),
 * for the Discord bridge's integration tests: the guild they share (a text channel and two
 * threads), the node's config, and small readers of what reached the fake and the bus.
 */
import type { Logger } from "../../../runtime/log/index.ts";
import type { SoulBlueprint } from "../../../actors/soul/index.ts";
import type { BridgeHandle } from "../../../bridges/core/index.ts";
import { startDiscordBridge } from "../../../bridges/discord/index.ts";
import { clusterSubjects, createInProcessBus, decodeEnvelope, encodeEnvelope, isKind, makeEnvelope, type Bus, type EventBody } from "../../../runtime/bus/index.ts";
import type { Store } from "../../../runtime/store/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { echoSoul } from "../cluster/blueprints.ts";
import { startFakeDiscord, type FakeDiscord, type FakeGuildConfig, type RecordedMessage } from "../fakes/discord/index.ts";

export const GUILD = "200";
export const GENERAL = "300";
/** A public thread (type 11) under #general. */
export const THREAD = "310";
export const OTHER_THREAD = "311";
export const BRIDGE = "discord-echo";
export const CLUSTER = "dsc";

const GUILDS: FakeGuildConfig[] = [
  {
    id: GUILD,
    name: "Ensoul Test Guild",
    owner_id: "400",
    channels: [
      { id: GENERAL, name: "general", type: 0 },
      { id: THREAD, name: "a-thread", type: 11, parent_id: GENERAL },
      { id: OTHER_THREAD, name: "another-thread", type: 11, parent_id: GENERAL },
    ],
  },
];

export function startDiscord(): Promise<FakeDiscord> {
  return startFakeDiscord({ heartbeatIntervalMs: 1000, guilds: GUILDS });
}

export interface DiscordNodeOptions {
  blueprint?: SoulBlueprint;
  options?: Record<string, unknown>;
  /** A bus shared across restarts: the in-process bus keeps its stream only while it lives (NATS keeps it on disk). */
  bus?: Bus;
  env?: Record<string, string>;
  log?: (line: string) => void;
  /** Instead of `log`: the node's whole logger (a test that reads levels). */
  logger?: Logger;
  /** The config marks the bridge optional: a bridge that cannot start is shown failed instead of stopping the start. */
  optional?: boolean;
}

export function discordNodeConfig(o: Pick<DiscordNodeOptions, "blueprint" | "options" | "optional"> = {}) {
  return parseClusterConfig({
    cluster: CLUSTER,
    souls: [{ id: "echo", blueprint: o.blueprint ?? echoSoul }],
    bridges: [{ type: "discord", soul: "echo", ...(o.optional ? { optional: true } : {}), ...(o.options ? { options: o.options } : {}) }],
    runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
  });
}

export function startDiscordNode(fake: FakeDiscord, data: string, o: DiscordNodeOptions = {}): Promise<EnsoulNode> {
  return startNode({
    config: discordNodeConfig(o),
    data,
    store: { noSync: true },
    env: o.env ?? { DISCORD_TOKEN: fake.token, DISCORD_API_URL: fake.apiUrl },
    // DEBUG_DISCORD=1 shows the node's log lines (the bridge's reports among them) when a test fails.
    ...(o.logger ? { logger: o.logger } : { log: o.log ?? (process.env["DEBUG_DISCORD"] ? (l: string) => console.log(l) : () => undefined) }),
    ...(o.bus ? { bus: o.bus, nodeId: "local", placement: "all" as const } : {}),
  });
}

export function sharedBus(): Bus {
  // Its handler errors are the bridge stopping mid-post, on purpose: the speech is redelivered.
  return createInProcessBus({ cluster: CLUSTER, onHandlerError: () => undefined });
}

/** The bot's messages in a channel (its replies), oldest first. */
export function botMessages(fake: FakeDiscord, channel: string): RecordedMessage[] {
  return fake.messages(channel).filter((m) => m.author["id"] === fake.botUser.id && !m.deleted);
}

/** Waits for the bot's reply to `messageId` and returns it. */
export function replyTo(fake: FakeDiscord, channel: string, messageId: string, timeoutMs = 8000): Promise<RecordedMessage> {
  return fake.waitFor(() => botMessages(fake, channel).find((m) => (m.message_reference as { message_id?: string } | undefined)?.message_id === messageId), timeoutMs);
}

/** The bridge's status on the node. */
export function bridgeStatus(node: EnsoulNode) {
  const status = node.status().bridges?.find((b) => b.name === BRIDGE);
  if (!status) throw new Error(`no bridge ${BRIDGE} in ${JSON.stringify(node.status().bridges)}`);
  return status;
}

/** The events published on the soul's events subject while watching. */
export async function watchEvents(node: EnsoulNode, soul = "echo"): Promise<{ events: EventBody[]; stop(): void }> {
  const events: EventBody[] = [];
  const sub = node.bus.subscribe(node.subjects.events(soul), (msg) => {
    const decoded = decodeEnvelope(msg.data);
    if (decoded.ok && isKind(decoded.envelope, "event")) events.push(decoded.envelope.body);
  });
  await sub.accepted();
  return { events, stop: () => sub.unsubscribe() };
}

/** Speech on the soul's says subject as its outbox (or a daimon) would publish it, answering `perception`. */
export async function publishSpeech(
  on: Pick<EnsoulNode, "bus" | "subjects">,
  s: { from?: string; proposalId: string; text: string; final: boolean; chunk?: number; perception: string },
): Promise<void> {
  const env = makeEnvelope("speech", s.from ?? "echo", `bridge-${BRIDGE}`, { proposalId: s.proposalId, text: s.text, final: s.final, ...(s.chunk !== undefined ? { chunk: s.chunk } : {}) }, { causation: s.perception });
  await on.bus.publish(on.subjects.says("echo"), encodeEnvelope(env), { msgId: env.id });
}

/**
 * The Discord bridge of soul `echo` on its own, without a node (and so without a soul: a test
 * publishes the speech), on the bus and store it is given, as a node would start it.
 */
export function startBridgeAlone(o: { fake: FakeDiscord; bus: Bus; store: Store; options?: Record<string, unknown>; reports?: string[] }): Promise<BridgeHandle> {
  return startDiscordBridge({
    entry: { type: "discord", soul: "echo", ...(o.options ? { options: o.options } : {}) },
    name: BRIDGE,
    bus: o.bus,
    subjects: clusterSubjects(o.bus.cluster),
    store: o.store,
    env: { DISCORD_TOKEN: o.fake.token, DISCORD_API_URL: o.fake.apiUrl },
    soulName: "Echo",
    report: (err, what) => o.reports?.push(`${what}: ${err instanceof Error ? err.message : String(err)}`),
    log: () => undefined,
    info: () => undefined,
  });
}
