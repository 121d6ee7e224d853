/**
 * What a node does with one message from `ensoul.<cluster>.soul.*.perceive` or
 * `ensoul.<cluster>.soul.*.internal`, whichever consumer delivered it (perceptionSources.ts). Resolving means "ack it"; throwing means
 * "redeliver it later" and is kept for failures that may pass (the store, a soul that could
 * not start). In order:
 *
 * 1. A soul this node does not host (or, under automatic placement, one still moving here
 *    from a node that holds its lease): acked and left to its node. A soul no node of the
 *    cluster hosts, or a subject whose soul token is no name at all: the first node
 *    dead-letters it (`unknown soul`, `no soul`), so it is reported once.
 * 2. An invalid envelope, a kind other than perception, an envelope addressed to another
 *    soul than its subject, a perception on `perceive` that carries `internal` or `process`
 *    (only the node-only `internal` subject may), a route to a process the soul does not
 *    have: dead-lettered with the reason, then acked; while the dead letter cannot be
 *    published, it throws instead, and the message comes back. The node keeps serving.
 * 3. `approve`/`deny` perceptions go to the soul's approval queue first; an authorised
 *    decision is consumed there and never becomes a turn.
 * 4. Everything else is recorded in the soul's LMDB inbox, keyed by envelope id, and only
 *    then acked: a redelivery (after a crash, or a publisher's retry) is recognised and
 *    dropped, and the soul processes the perception once.
 *
 * With a source that redelivers until acked (`holds`: the JetStream consumer), step 4 skips
 * the inbox write: the soul records the perception in its turn's
 * commit, and the handler answers `{ ackAfter }`, which resolves after that commit. The
 * source takes the next message of the soul at once and acks this one then. That saves an
 * LMDB commit on the path of every conversational turn (see actors/soul/HeldPerceptions.ts).
 */
import type { Approvals } from "../../actors/gate/index.ts";
import type { HeldPerceiveResult, Soul, SoulBlueprint } from "../../actors/soul/index.ts";
import { clusterSubjects, deadLetter, decodeEnvelope, isKind, LeaseHeldError, parseSubject, soulOfSubject, type Bus, type Envelope } from "../bus/index.ts";
import type { NodeCounters } from "./controlProtocol.ts";
import type { EventPublisher } from "./soulEvents.ts";

export interface IntakeHost {
  readonly bus: Bus;
  /** This node hosts the soul. */
  hosts(soulId: string): boolean;
  /** Some node of the cluster config hosts the soul. */
  knows(soulId: string): boolean;
  /** This node reports perceptions for souls no node hosts (the first node does). */
  readonly reportsUnknown: boolean;
  blueprint(soulId: string): SoulBlueprint;
  /** The live soul, activated from LMDB if it was passivated. */
  soul(soulId: string): Promise<Soul>;
  approvals(soulId: string): Approvals | undefined;
  events: EventPublisher;
  /** Remembers who sent a perception, so speech answering it is addressed back. */
  rememberSender(perceptionId: string, from: string): void;
  count(counter: keyof NodeCounters, by?: number): void;
}

/** Nothing: ack the message now. `ackAfter`: the message is in line; ack it when this resolves, hand it back if it rejects. */
export type PerceptionOutcome = void | { ackAfter: Promise<void> };

export type PerceptionHandler = (subject: string, data: Uint8Array) => Promise<PerceptionOutcome>;

export interface IntakeOptions {
  /** The source redelivers a message until it is acked, and takes `{ ackAfter }`. */
  holds: boolean;
}

/**
 * The fields that put words in the soul's own voice (`internal`) or move it to a process of
 * the sender's choosing (`process`). Anyone allowed to perceive (every bridge) publishes on
 * `perceive`, so there they are refused, never dropped silently: only the `internal` subject,
 * which NATS permissions give to nodes alone, may carry them (docs/SECURITY.md 2.5).
 */
function nodeOnlyFields(body: { internal?: boolean; process?: string }): string[] {
  return (["internal", "process"] as const).filter((field) => body[field] !== undefined).map((field) => `'${field}'`);
}

export function createPerceptionIntake(host: IntakeHost, options: IntakeOptions = { holds: false }): PerceptionHandler {
  const { bus } = host;
  const dead = async (subject: string, data: Uint8Array, reason: string) => {
    // Refused means acked, and acked without its dead letter it would vanish: fail instead, so it comes back.
    if (!(await deadLetter(bus, bus.cluster, { subject, reason, data }))) throw new Error(`could not dead-letter it (${reason}); it will be delivered again`);
    host.count("dead");
  };

  return async (subject, data): Promise<PerceptionOutcome> => {
    const parsed = parseSubject(subject);
    if (!parsed || parsed.kind !== "soul" || (parsed.verb !== "perceive" && parsed.verb !== "internal") || parsed.cluster !== bus.cluster) {
      const named = soulOfSubject(subject);
      // A client published with no name for a soul (`b@d`, a literal `*`): every node's consumer delivers it, the first reports it.
      if ("reason" in named) return host.reportsUnknown ? dead(subject, data, named.reason) : undefined;
      // The consumer's filter makes this unreachable; a message that got here anyway is not ours to route.
      await dead(subject, data, `not a perceive subject of cluster ${bus.cluster}`);
      return;
    }
    const soulId = parsed.id;
    if (!host.hosts(soulId)) {
      if (!host.knows(soulId) && host.reportsUnknown) await dead(subject, data, `unknown soul '${soulId}' (no node of cluster '${bus.cluster}' hosts it)`);
      return;
    }
    const decoded = decodeEnvelope(data);
    if (!decoded.ok) return dead(subject, data, decoded.reason);
    const env = decoded.envelope;
    if (!isKind(env, "perception")) return dead(subject, data, `unexpected kind ${env.kind} (this receiver takes perception)`);
    if (env.to !== soulId) return dead(subject, data, `envelope is addressed to '${env.to.slice(0, 128)}' but arrived on the ${parsed.verb} subject of '${soulId}'`);
    const body = env.body;
    const claimed = parsed.verb === "perceive" ? nodeOnlyFields(body) : [];
    if (claimed.length > 0) {
      return dead(subject, data, `perception on the perceive subject carries ${claimed.join(" and ")}: only the node hosting a soul may set 'internal' or 'process', on ${clusterSubjects(bus.cluster).internal(soulId)}`);
    }
    if (body.process !== undefined && !host.blueprint(soulId).processes.has(body.process)) {
      return dead(subject, data, `perception routed to unknown process '${body.process.slice(0, 128)}' of soul '${soulId}'`);
    }

    const approvals = host.approvals(soulId);
    if (approvals) {
      const result = await approvals.handlePerception(body);
      if (result.consumed) {
        host.events.node(
          soulId,
          "approval",
          {
            outcome: result.outcome ?? "unknown",
            user: body.name,
            ...(result.proposalId !== undefined ? { proposalId: result.proposalId } : {}),
            ...(result.reason !== undefined ? { reason: result.reason } : {}),
          },
          env.id,
        );
        return;
      }
    }

    let soul: Soul;
    try {
      soul = await host.soul(soulId);
    } catch (err) {
      // The soul is moving here and its old node has not let go yet: passed by, as for a soul
      // another node runs. This node reads it back from the stream when it opens the soul
      // (failover/missedPerceptions.ts), so it is answered once, in order with the rest.
      if (err instanceof LeaseHeldError) return;
      throw err;
    }
    host.rememberSender(env.id, env.from);
    const input = perceptionInputOf(env);
    const result = options.holds ? await soul.perceiveHeld(input) : await soul.perceive(input);
    if (result.accepted) host.count("perceptions");
    else if (result.reason === "duplicate") host.count("duplicates");
    else {
      host.events.node(soulId, "refused", { reason: `soul '${soulId}' has expired` }, env.id);
      await dead(subject, data, `soul '${soulId}' has expired; it takes no more perceptions`);
    }
    const { settled } = result as HeldPerceiveResult;
    if (settled) return { ackAfter: settled };
  };
}

/** What a soul perceives from a perception envelope (PROTOCOL.md §5): the one place that maps one to the other. */
export function perceptionInputOf(env: Envelope<"perception">) {
  const body = env.body;
  return {
    id: env.id,
    ts: env.ts,
    action: body.action,
    content: body.content,
    name: body.name,
    ...(body.internal !== undefined ? { internal: body.internal } : {}),
    ...(body.process !== undefined ? { process: body.process } : {}),
    ...(body.params !== undefined ? { params: body.params } : {}),
    ...(body.meta !== undefined ? { meta: body.meta } : {}),
  };
}
