import { assign, createActor, fromCallback, setup, type Actor, type ActorOptions, type EventObject } from "xstate";
import type { Bus, BusMessage, Subscription } from "../../runtime/bus/index.ts";
import { deadLetter } from "../../runtime/bus/index.ts";
import { decodeEnvelope, encodeEnvelope, makeEnvelope, type VerdictBody } from "../../runtime/bus/index.ts";
import { MSG_ID_HEADER } from "../../runtime/bus/index.ts";
import { assertName, clusterSubjects } from "../../runtime/bus/index.ts";
import { componentLogger } from "../../runtime/log/index.ts";
import { errorMessage } from "./errors.ts";
import type { Gate, GateContext } from "./Gate.ts";
import { evaluateGate, type GateOutcome } from "./gateChain.ts";
import { parseProposal } from "./proposalSchema.ts";
import { GATE_PHASE_HEADER } from "./remoteGate.ts";
import { errorVerdictBody, gateAddress, verdictBody } from "./verdictWire.ts";

/**
 * A skill-gate actor: one gate served on `ensoul.<cluster>.gate.<skill>.verify`, in queue
 * group `<skill>`, so any number of instances (on any node) share the requests and each
 * request is answered once.
 *
 *   serving ──(STOP | subscription lost)──▶ stopped
 *
 * Requests are answered concurrently: one slow verify (bounded by its deadline) does not
 * hold up the others. A request that is not a valid proposal gets an error verdict at once
 * and goes to dead-letter; the actor keeps serving.
 */

export const DEFAULT_SKILL_GATE_DEADLINE_MS = 2_000;

export interface SkillGateInput {
  cluster: string;
  skill: string;
  subject: string;
  deadlineMs: number;
}

export interface SkillGateStats {
  /** Requests answered with a decision of the gate (any verdict). */
  served: number;
  passed: number;
  transformed: number;
  intercepted: number;
  held: number;
  /** The gate threw, answered garbage or missed its deadline: answered with an error verdict. */
  errors: number;
  /** Requests that were not valid proposals: error verdict and dead-letter. */
  malformed: number;
}

export interface SkillGateContext extends SkillGateStats {
  cluster: string;
  skill: string;
  subject: string;
  deadlineMs: number;
  /** Why the actor stopped serving on its own (the bus closed under it). */
  failure: string | null;
}

export type SkillGateEvent =
  | { type: "STOP" }
  | { type: "gate.served"; decision: GateOutcome["decision"] }
  | { type: "gate.malformed"; reason: string }
  | { type: "gate.failed"; error: string };

/** What the machine needs that is not plain data: the bus and the gate itself. */
interface SkillGateHost {
  bus: Bus;
  gate: Gate;
  track(work: Promise<void>): void;
  /** Settles once the bus has taken the subscription or refused it (set when serving starts). */
  accepted?: Promise<void>;
}

/** Keyed by actor system: each skill-gate actor is the root of its own system. */
const hosts = new WeakMap<object, SkillGateHost>();

function hostOf(system: object): SkillGateHost {
  const host = hosts.get(system);
  if (!host) throw new Error("skill-gate machine started without its gate: use startSkillGate()");
  return host;
}

const serveGate = fromCallback<EventObject, SkillGateInput>(({ input, system, sendBack }) => {
  const host = hostOf(system);
  let live = true;
  const report = (event: SkillGateEvent) => {
    if (live) sendBack(event);
  };
  let sub: Subscription;
  try {
    sub = host.bus.subscribe(input.subject, (msg) => host.track(serveRequest(host, input, msg, report)), { queue: input.skill });
  } catch (err) {
    queueMicrotask(() => report({ type: "gate.failed", error: `cannot subscribe to ${input.subject}: ${errorMessage(err)}` }));
    return () => {
      live = false;
    };
  }
  // A refused subscription (NATS permissions) ends at once too: say so, not that the bus closed.
  host.accepted = sub.accepted();
  host.accepted.then(
    () => sub.closed.then(() => queueMicrotask(() => report({ type: "gate.failed", error: `subscription on ${input.subject} ended (the bus closed)` }))),
    (err: unknown) => report({ type: "gate.failed", error: errorMessage(err) }),
  );
  return () => {
    live = false;
    sub.unsubscribe();
  };
});

export const skillGateMachine = setup({
  types: {} as { context: SkillGateContext; events: SkillGateEvent; input: SkillGateInput },
  actors: { serveGate },
  actions: {
    countServed: assign(({ context, event }) => {
      if (event.type !== "gate.served") return {};
      const d = event.decision;
      return {
        served: context.served + 1,
        passed: context.passed + (d === "pass" || d === "skip" ? 1 : 0),
        transformed: context.transformed + (d === "transform" ? 1 : 0),
        intercepted: context.intercepted + (d === "intercept" ? 1 : 0),
        held: context.held + (d === "hold" ? 1 : 0),
        errors: context.errors + (d === "error" || d === "timeout" ? 1 : 0),
      };
    }),
    countMalformed: assign({ malformed: ({ context }) => context.malformed + 1 }),
    recordFailure: assign({ failure: ({ event }) => (event.type === "gate.failed" ? event.error : null) }),
  },
}).createMachine({
  id: "skillGate",
  context: ({ input }) => ({
    cluster: input.cluster,
    skill: input.skill,
    subject: input.subject,
    deadlineMs: input.deadlineMs,
    served: 0,
    passed: 0,
    transformed: 0,
    intercepted: 0,
    held: 0,
    errors: 0,
    malformed: 0,
    failure: null,
  }),
  initial: "serving",
  states: {
    serving: {
      invoke: {
        id: "subscription",
        src: "serveGate",
        input: ({ context }) => ({ cluster: context.cluster, skill: context.skill, subject: context.subject, deadlineMs: context.deadlineMs }),
      },
      on: {
        "gate.served": { actions: "countServed" },
        "gate.malformed": { actions: "countMalformed" },
        "gate.failed": { target: "stopped", actions: "recordFailure" },
        STOP: { target: "stopped" },
      },
    },
    stopped: { type: "final" },
  },
});

export type SkillGateMachine = typeof skillGateMachine;

export interface SkillGateOptions {
  bus: Bus;
  /** Must be the bus's cluster namespace. */
  cluster: string;
  gate: Gate;
  /** The skill (subject token and queue group); default: the gate's name. */
  skill?: string;
  /** Deadline for one verify (default 2 s); past it the answer is an error verdict. */
  deadlineMs?: number;
  inspect?: ActorOptions<SkillGateMachine>["inspect"];
}

export interface SkillGateHandle {
  readonly skill: string;
  readonly subject: string;
  readonly actor: Actor<SkillGateMachine>;
  stats(): SkillGateStats;
  /** True while the actor is in `serving`. */
  serving(): boolean;
  /**
   * Resolves once the bus has taken the gate's subscription; rejects with the reason it does
   * not serve (a NATS user whose permissions refuse the verify subject, a closed bus).
   */
  ready(): Promise<void>;
  /** Stops taking requests; resolves once the requests already taken have been answered. */
  stop(): Promise<void>;
}

/** Starts a skill-gate actor serving `gate` on its verify subject. */
export function startSkillGate(options: SkillGateOptions): SkillGateHandle {
  const skill = assertName("skill", options.skill ?? options.gate.name);
  const subject = clusterSubjects(options.cluster).gateVerify(skill);
  const deadlineMs = options.deadlineMs ?? DEFAULT_SKILL_GATE_DEADLINE_MS;
  const inFlight = new Set<Promise<void>>();
  const host: SkillGateHost = {
    bus: options.bus,
    gate: options.gate,
    track(work) {
      const settled = work.catch((err) => componentLogger("gate").error(`skill gate ${skill} failed to serve a request: ${errorMessage(err)}`));
      inFlight.add(settled);
      const forget = () => void inFlight.delete(settled);
      settled.then(forget, forget);
    },
  };
  const actor = createActor(skillGateMachine, {
    input: { cluster: options.cluster, skill, subject, deadlineMs },
    ...(options.inspect ? { inspect: options.inspect } : {}),
  });
  hosts.set(actor.system, host);
  actor.start();
  return {
    skill,
    subject,
    actor,
    stats() {
      const { served, passed, transformed, intercepted, held, errors, malformed } = actor.getSnapshot().context;
      return { served, passed, transformed, intercepted, held, errors, malformed };
    },
    serving: () => actor.getSnapshot().matches("serving"),
    async ready() {
      await host.accepted;
      const { failure } = actor.getSnapshot().context;
      if (failure !== null) throw new Error(failure);
    },
    async stop() {
      if (actor.getSnapshot().status === "active") actor.send({ type: "STOP" });
      await Promise.allSettled([...inFlight]);
    },
  };
}

async function serveRequest(host: SkillGateHost, input: SkillGateInput, msg: BusMessage, report: (event: SkillGateEvent) => void): Promise<void> {
  const { bus, gate } = host;
  // Per the protocol, a message with a stream msg id belongs to a JetStream publisher waiting for its ack.
  if (msg.headers?.[MSG_ID_HEADER] !== undefined) {
    await deadLetter(bus, input.cluster, { subject: msg.subject, reason: "a stream publish on a gate verify subject (not answered)", data: msg.data });
    report({ type: "gate.malformed", reason: "stream publish" });
    return;
  }
  const respond = (body: VerdictBody, to: string, causation: string | undefined): void => {
    if (msg.reply === undefined) return;
    let bytes: Uint8Array;
    try {
      bytes = encodeEnvelope(makeEnvelope("verdict", gateAddress(input.skill), to, body, causation ? { causation } : {}));
    } catch (err) {
      // A transformed proposal that cannot travel is the gate's failure, and must still block.
      const fallback = errorVerdictBody(`gate ${gate.name} produced a verdict that cannot be sent: ${errorMessage(err)}`);
      bytes = encodeEnvelope(makeEnvelope("verdict", gateAddress(input.skill), to, fallback, causation ? { causation } : {}));
    }
    msg.respond(bytes);
  };
  const reject = async (reason: string, to: string, causation: string | undefined): Promise<void> => {
    respond(errorVerdictBody(`malformed request: ${reason}`), to, causation);
    await deadLetter(bus, input.cluster, { subject: msg.subject, reason, data: msg.data });
    report({ type: "gate.malformed", reason });
  };

  if (msg.reply === undefined) return reject("not a request (no reply subject)", "unknown", undefined);
  const decoded = decodeEnvelope(msg.data);
  if (!decoded.ok) return reject(decoded.reason, "unknown", undefined);
  const env = decoded.envelope;
  if (env.kind !== "proposal") return reject(`expected a proposal envelope, got ${env.kind}`, env.from, env.id);
  const parsed = parseProposal(env.body);
  if (!parsed.ok) return reject(parsed.reason, env.from, env.id);

  const phase = msg.headers?.[GATE_PHASE_HEADER];
  const ctx: GateContext = { soulId: parsed.proposal.soulId, ...(phase === "review" || phase === "dispatch" ? { phase } : {}) };
  const outcome = await evaluateGate(gate, parsed.proposal, ctx, input.deadlineMs);
  respond(verdictBody(outcome), env.from, env.id);
  report({ type: "gate.served", decision: outcome.decision });
}
