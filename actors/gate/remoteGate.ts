import type { Bus } from "../../runtime/bus/index.ts";
import { encodeEnvelope } from "../../runtime/bus/index.ts";
import { BusTimeoutError, NoRespondersError } from "../../runtime/bus/index.ts";
import { clusterSubjects } from "../../runtime/bus/index.ts";
import type { Proposal } from "../vocabulary/index.ts";
import { errorMessage, GateError, GateTimeoutError } from "./errors.ts";
import type { Gate, GateContext } from "./Gate.ts";
import { proposalEnvelope, readVerdict } from "./verdictWire.ts";

export const DEFAULT_REMOTE_GATE_TIMEOUT_MS = 2_000;
/** Header telling the skill gate which phase it is verifying for. */
export const GATE_PHASE_HEADER = "Ensoul-Gate-Phase";

export interface RemoteGateOptions {
  bus: Bus;
  cluster: string;
  /** The skill: requests go to `ensoul.<cluster>.gate.<skill>.verify`. */
  skill: string;
  priority: number;
  /** How long to wait for a verdict (default 2 s). */
  timeoutMs?: number;
  trigger?: (ctx: GateContext, proposal: Proposal) => boolean;
  /** Name in decisions (default: the skill). */
  name?: string;
}

/**
 * The client side of a skill-gate actor: a gate whose verify is a request/reply on the
 * skill's verify subject. A timeout, no responders, an undecodable or mismatched reply, or
 * an error verdict all throw, and the chain blocks the proposal (fail closed).
 */
export function remoteGate(options: RemoteGateOptions): Gate {
  const { bus, skill } = options;
  const subject = clusterSubjects(options.cluster).gateVerify(skill);
  const timeoutMs = options.timeoutMs ?? DEFAULT_REMOTE_GATE_TIMEOUT_MS;
  const name = options.name ?? skill;
  return {
    name,
    priority: options.priority,
    // The bus's own timeout should fire first: its error says more than the chain's deadline.
    timeoutMs: timeoutMs + 250,
    ...(options.trigger ? { trigger: options.trigger } : {}),
    async verify(proposal, ctx) {
      const request = proposalEnvelope(proposal, skill);
      const bytes = encodeEnvelope(request);
      let reply: Uint8Array;
      try {
        reply = await bus.request(subject, bytes, { timeoutMs, ...(ctx.phase ? { headers: { [GATE_PHASE_HEADER]: ctx.phase } } : {}) });
      } catch (err) {
        if (err instanceof BusTimeoutError) throw new GateTimeoutError(name, timeoutMs, `skill gate ${skill} did not answer within ${timeoutMs} ms`);
        if (err instanceof NoRespondersError) throw new GateError(name, `no skill-gate actor serves ${skill} (no responders on ${subject})`);
        throw new GateError(name, `request to skill gate ${skill} failed: ${errorMessage(err)}`);
      }
      return readVerdict(reply, { id: request.id, proposal }, skill, timeoutMs);
    },
  };
}
