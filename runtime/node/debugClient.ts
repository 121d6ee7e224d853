/**
 * The debugger's requests to the node hosting a soul (docs/DEBUGGER.md): the soul now
 * (`soul`), its committed turns (`turns`) and a revert (`revert`). Unlike `requestControl`,
 * a failure keeps the node's error code, so the debugger can answer 404, 400 or 409 as the
 * node meant it, and 502 when no node answered.
 */
import { BusTimeoutError, NoRespondersError, type Bus } from "../bus/index.ts";
import { clusterSubjects } from "../bus/index.ts";
import { ClusterClientError } from "./clusterClient.ts";
import {
  decodeControl,
  encodeControl,
  isControlError,
  type ControlErrorCode,
  type ControlVerb,
  type RevertReply,
  type RevertRequest,
  type SoulDetailReply,
  type TurnsReply,
  type TurnsRequest,
} from "./controlProtocol.ts";

/** `no-answer`: the node is not running, or did not answer in time. */
export type NodeRequestFailure = ControlErrorCode | "no-answer" | "failed";

export class NodeRequestError extends ClusterClientError {
  readonly code: NodeRequestFailure;
  constructor(message: string, code: NodeRequestFailure) {
    super(message);
    this.name = "NodeRequestError";
    this.code = code;
  }
}

const CODES: readonly string[] = ["not-found", "bad-request", "conflict"] satisfies ControlErrorCode[];

/** Default time a node gets to answer a read. */
export const READ_TIMEOUT_MS = 5_000;
/** A revert waits for the soul's running turn, which may be a slow model call. */
export const REVERT_TIMEOUT_MS = 60_000;

async function ask<T extends object>(bus: Bus, nodeId: string, verb: ControlVerb, body: object, timeoutMs: number): Promise<T> {
  const subject = clusterSubjects(bus.cluster).node(nodeId, verb);
  let reply: Uint8Array;
  try {
    reply = await bus.request(subject, encodeControl(body), { timeoutMs });
  } catch (err) {
    if (err instanceof NoRespondersError) throw new NodeRequestError(`node '${nodeId}' of cluster '${bus.cluster}' is not running`, "no-answer");
    if (err instanceof BusTimeoutError) throw new NodeRequestError(`node '${nodeId}' did not answer '${verb}' within ${timeoutMs} ms`, "no-answer");
    throw new NodeRequestError(`node '${nodeId}' could not be asked '${verb}': ${err instanceof Error ? err.message : String(err)}`, "no-answer");
  }
  const decoded = decodeControl<T & { code?: unknown }>(reply);
  if (isControlError(decoded)) {
    const code = (decoded as { code?: unknown }).code;
    throw new NodeRequestError(decoded.error, typeof code === "string" && CODES.includes(code) ? (code as ControlErrorCode) : "failed");
  }
  return decoded;
}

export function requestSoulDetail(bus: Bus, nodeId: string, soulId: string, timeoutMs = READ_TIMEOUT_MS): Promise<SoulDetailReply> {
  return ask<SoulDetailReply>(bus, nodeId, "soul", { soulId }, timeoutMs);
}

export function requestTurns(bus: Bus, nodeId: string, request: TurnsRequest, timeoutMs = READ_TIMEOUT_MS): Promise<TurnsReply> {
  return ask<TurnsReply>(bus, nodeId, "turns", request, timeoutMs);
}

export function requestRevert(bus: Bus, nodeId: string, request: RevertRequest, timeoutMs = REVERT_TIMEOUT_MS): Promise<RevertReply> {
  return ask<RevertReply>(bus, nodeId, "revert", request, timeoutMs);
}
