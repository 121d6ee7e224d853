/**
 * `ensoul chat <soul> --nats <url>`: the terminal as a client of a running cluster. Each
 * line becomes a perception envelope on the soul's perceive subject; what the soul says comes
 * back on its says subject (chunks live on a terminal, finals otherwise), and its events say
 * when the turn is over: the `soul.turn` event lists the speech the turn will deliver, so the
 * client waits for exactly that (or for a gate blocking it at dispatch) before the next line.
 */
import { userInfo } from "node:os";
import type { Readable, Writable } from "node:stream";
import {
  decodeEnvelope,
  encodeEnvelope,
  isKind,
  makeEnvelope,
  type Bus,
  type Envelope,
  type Subscription,
} from "../bus/index.ts";
import { clusterSubjects } from "../bus/index.ts";
import { ClusterClientError, findSoul, NodeDownError, type DiscoveredNode } from "../node/index.ts";
import { connectClusterBus, NatsUnreachableError, type NatsConnectOptions } from "../node/index.ts";
import { CliError } from "./CliError.ts";
import { serversOf } from "./natsOptions.ts";
import { watchShutdown } from "./shutdown.ts";
import { runTerminalChat, type ChatSpeech } from "../../bridges/terminal/index.ts";
import { failedTurnLine, failedTurnOf } from "../../actors/soul/index.ts";

export interface NatsChatOptions {
  soul: string;
  nats: NatsConnectOptions;
  cluster: string;
  user: string;
  /** How long to wait for a turn to finish (default 120 s). */
  turnTimeoutMs?: number;
  /**
   * When the soul's node is down: publish anyway and wait. Perceptions are stored in the
   * cluster's stream, so the node answers them when it is back.
   */
  queue?: boolean;
  input?: Readable;
  output?: Writable;
}

interface PendingTurn {
  perceptionId: string;
  sink: ChatSpeech;
  /** Speech the finished turn will deliver; undefined until its `soul.turn` event. */
  expected?: Set<string>;
  delivered: Set<string>;
  notes: string[];
  resolve(): void;
  reject(err: Error): void;
}

export async function natsChat(o: NatsChatOptions): Promise<void> {
  let bus: Bus;
  try {
    bus = await connectClusterBus({ ...o.nats, cluster: o.cluster, name: `ensoul-chat-${o.cluster}` });
  } catch (err) {
    if (err instanceof NatsUnreachableError) throw new CliError(err.message, 1);
    throw err;
  }
  const shutdown = watchShutdown({ command: "chat", finishing: "finishing the turn…" });
  try {
    const { speaker, banner } = await whereTheSoulIs(bus, o);
    await chatOverBus({
      stop: shutdown.signal,
      onInterrupt: () => shutdown.interrupt("SIGINT"),
      bus,
      soul: o.soul,
      cluster: o.cluster,
      user: o.user,
      speaker,
      banner: `${banner} · ${serversOf(o.nats)}`,
      ...(o.turnTimeoutMs !== undefined ? { turnTimeoutMs: o.turnTimeoutMs } : {}),
      ...(o.input ? { input: o.input } : {}),
      ...(o.output ? { output: o.output } : {}),
    });
  } finally {
    await bus.drain().catch(() => bus.close());
    shutdown.dispose();
  }
}

/**
 * Who answers, for the banner: the soul on its node, or (with --queue) the soul whose node is
 * down, named by its id until that node is back. Without --queue, a down node is an error that
 * offers it.
 */
async function whereTheSoulIs(bus: Bus, o: NatsChatOptions): Promise<{ speaker: string; banner: string }> {
  let where: DiscoveredNode;
  try {
    where = await findSoul(bus, o.soul);
  } catch (err) {
    if (err instanceof NodeDownError) {
      if (!o.queue) throw new CliError(`${err.message}; give --queue to leave your lines for it: they are answered when it is back`, 1);
      const down = err.node !== undefined ? `node ${err.node} of cluster ${o.cluster} is not running` : `no node of cluster ${o.cluster} is running`;
      return { speaker: o.soul, banner: `${o.soul}: ${down}; your lines wait for it and are answered when it is back` };
    }
    if (err instanceof ClusterClientError) throw new CliError(err.message);
    throw err;
  }
  const speaker = where.status.souls.find((s) => s.id === o.soul)?.name ?? o.soul;
  return { speaker, banner: `${speaker} (${o.soul}) on node ${where.status.node} of cluster ${o.cluster}` };
}

export interface BusChatOptions {
  bus: Bus;
  soul: string;
  cluster: string;
  user: string;
  /** The soul's display name, used as the speaker of its answers. */
  speaker: string;
  banner?: string;
  turnTimeoutMs?: number;
  input?: Readable;
  output?: Writable;
  interactive?: boolean;
  /** Ends the chat after the line being answered (bridges/terminal). */
  stop?: AbortSignal;
  onInterrupt?: () => void;
}

/**
 * The terminal bound to a soul over a bus it is already connected to (NATS, or a node's
 * in-process bus): each line a perception envelope, each answer from the soul's says subject.
 */
export async function chatOverBus(o: BusChatOptions): Promise<{ turns: number }> {
  const { bus, speaker } = o;
  const output = o.output ?? process.stdout;
  const subjects = clusterSubjects(o.cluster);
  const subs: Subscription[] = [];
  try {
    let current: PendingTurn | null = null;

    const settle = (turn: PendingTurn) => {
      if (turn.expected && [...turn.expected].every((id) => turn.delivered.has(id))) turn.resolve();
    };
    const read = (data: Uint8Array): Envelope | undefined => {
      const decoded = decodeEnvelope(data);
      return decoded.ok ? decoded.envelope : undefined;
    };

    subs.push(
      bus.subscribe(subjects.says(o.soul), (msg) => {
        const env = read(msg.data);
        const turn = current;
        if (!env || !isKind(env, "speech") || !turn || env.causation !== turn.perceptionId) return;
        if (!env.body.final) {
          turn.sink.chunk(env.body.proposalId, speaker, env.body.text);
          return;
        }
        if (turn.delivered.has(env.body.proposalId)) return; // a re-publish after a crash
        turn.delivered.add(env.body.proposalId);
        turn.sink.final(env.body.proposalId, speaker, env.body.text);
        settle(turn);
      }),
      bus.subscribe(subjects.events(o.soul), (msg) => {
        const env = read(msg.data);
        const turn = current;
        if (!env || !isKind(env, "event") || !turn) return;
        const data = (env.body.data ?? {}) as Record<string, unknown>;
        const type = env.body.type;
        if (type === "gate.decision") {
          // A speech stopped at dispatch (re-verification) will never arrive: stop waiting for it.
          const pid = String(data.proposalId ?? "");
          const blocking = ["intercept", "hold", "error", "timeout"].includes(String(data.decision));
          if (blocking && data.phase === "dispatch" && turn.expected?.has(pid) && !turn.delivered.has(pid)) {
            turn.delivered.add(pid);
            turn.notes.push(`! ${speaker}'s reply was blocked by gate ${String(data.gate)}: ${String(data.reason ?? data.decision)}`);
            settle(turn);
          }
          return;
        }
        if (env.causation !== turn.perceptionId) return;
        if (type === "soul.turn") {
          turn.expected = new Set(Array.isArray(data.speech) ? data.speech.map(String) : []);
          settle(turn);
        } else if (type === "soul.intercepted") {
          turn.notes.push(`! ${speaker}'s ${String((data.proposal as { kind?: string } | undefined)?.kind ?? "proposal")} was intercepted: ${String(data.reason ?? "")}`);
        } else if (type === "soul.error" && data.phase === "process") {
          turn.reject(new Error(failedTurnLine(speaker, failedTurnOf(env) ?? { message: String(data.message ?? "error") })));
        } else if (type === "node.approval") {
          turn.notes.push(`! approval: ${String(data.outcome)}${data.reason ? ` (${String(data.reason)})` : ""}`);
          turn.resolve();
        } else if (type === "node.refused") {
          turn.reject(new Error(String(data.reason ?? "refused")));
        }
      }),
    );

    const timeoutMs = o.turnTimeoutMs ?? 120_000;
    return await runTerminalChat({
      ...(o.input ? { input: o.input } : {}),
      output,
      ...(o.banner !== undefined ? { banner: o.banner } : {}),
      ...(o.interactive !== undefined ? { interactive: o.interactive } : {}),
      ...(o.stop ? { stop: o.stop } : {}),
      ...(o.onInterrupt ? { onInterrupt: o.onInterrupt } : {}),
      turn: async (text, say) => {
        const env = makeEnvelope("perception", `cli-${safeName(userInfo().username)}`, o.soul, { action: "said", content: text, name: o.user });
        let timer: NodeJS.Timeout | undefined;
        const done = new Promise<void>((resolve, reject) => {
          current = { perceptionId: env.id, sink: say, delivered: new Set(), notes: [], resolve, reject };
          timer = setTimeout(() => reject(new Error(`no answer from ${speaker} within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
        });
        const turn = current as PendingTurn | null;
        try {
          await bus.publish(subjects.perceive(o.soul), encodeEnvelope(env), { msgId: env.id });
          await done;
        } finally {
          clearTimeout(timer);
          for (const note of turn?.notes ?? []) output.write(`${note}\n`);
          current = null;
        }
      },
    });
  } finally {
    for (const s of subs) s.unsubscribe();
  }
}

/** A user name as an address token. */
function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "user";
}
