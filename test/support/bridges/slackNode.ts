/**
 * A real node with a Slack bridge pointed at the fake Slack (test/support/fakes/slack): the
 * config, the env the bridge reads its tokens from, and watchers for what the node puts on its
 * bus (perceptions, `bridge.ignored` events) and for the bridge's state in the registry.
 */
import { decodeEnvelope, type Envelope } from "../../../runtime/bus/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import type { SoulBlueprint } from "../../../actors/soul/index.ts";
import { echoSoul } from "../cluster/blueprints.ts";
import type { FakeSlack } from "../fakes/slack/index.ts";

export const SIGNING_SECRET = "slack-bridge-test-signing-secret";

export interface SlackNodeOptions {
  data: string;
  /**
   * The bridge's options; default Socket Mode reconnecting after 1 s (the SDK pings every third
   * of it and drops a socket whose pong is later than it: much lower trips on a busy test run).
   */
  options?: Record<string, unknown>;
  soul?: SoulBlueprint;
  /** Replaces the env built from the fake (a missing or wrong token). */
  env?: Record<string, string | undefined>;
  log?: (line: string) => void;
  /** The config marks the bridge optional: a bridge that cannot start is shown failed instead of stopping the start. */
  optional?: boolean;
}

export function slackEnv(fake: FakeSlack): Record<string, string> {
  return { SLACK_BOT_TOKEN: fake.identity.botToken, SLACK_APP_TOKEN: fake.identity.appToken, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: fake.apiUrl };
}

export function startSlackNode(fake: FakeSlack, o: SlackNodeOptions): Promise<EnsoulNode> {
  const config = parseClusterConfig({
    cluster: "slacktest",
    souls: [{ id: "echo", blueprint: o.soul ?? echoSoul }],
    bridges: [{ type: "slack", soul: "echo", ...(o.optional ? { optional: true } : {}), options: o.options ?? { mode: "socket", clientPingTimeoutMs: 1000 } }],
    runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
  });
  return startNode({ config, data: o.data, store: { noSync: true }, env: o.env ?? slackEnv(fake), log: o.log ?? (() => undefined) });
}

export type BridgeView = NonNullable<ReturnType<EnsoulNode["status"]>["bridges"]>[number];

export function slackBridge(node: EnsoulNode): BridgeView {
  const bridge = node.status().bridges?.find((b) => b.type === "slack");
  if (!bridge) throw new Error(`no slack bridge in ${JSON.stringify(node.status().bridges)}`);
  return bridge;
}

/** Every state the bridge shows in the node's registry, in order, from now on. */
export function watchBridgeStates(node: EnsoulNode) {
  const states: string[] = [slackBridge(node).state];
  const sub = node.registry.subscribe(() => {
    const state = node.status().bridges?.find((b) => b.type === "slack")?.state;
    if (state !== undefined && state !== states[states.length - 1]) states.push(state);
  });
  return {
    states,
    until(predicate: (states: string[]) => boolean, timeoutMs = 5000): Promise<string[]> {
      return poll(() => (predicate(states) ? states : undefined), timeoutMs, () => `bridge states ${states.join(" -> ")}`);
    },
    stop: () => sub.unsubscribe(),
  };
}

/** The envelopes published on a subject, decoded. */
export function watchSubject(node: EnsoulNode, subject: string) {
  const seen: Envelope[] = [];
  const sub = node.bus.subscribe(subject, (msg) => {
    const decoded = decodeEnvelope(msg.data);
    if (decoded.ok) seen.push(decoded.envelope);
  });
  return {
    seen,
    until<T>(pick: (seen: Envelope[]) => T | undefined, timeoutMs = 5000): Promise<T> {
      return poll(() => pick(seen), timeoutMs, () => `${subject}: ${seen.length} envelopes`);
    },
    stop: () => sub.unsubscribe(),
  };
}

export function perceptionsOf(envelopes: Envelope[]): Envelope<"perception">[] {
  return envelopes.filter((e): e is Envelope<"perception"> => e.kind === "perception");
}

/** Resolves with `check`'s first defined value, polling every 10 ms. */
export async function poll<T>(check: () => T | undefined, timeoutMs: number, what: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
