/**
 * The node's control surface on `ensoul.<cluster>.node.<nodeId>.<verb>` (controlProtocol.ts,
 * docs/PROTOCOL.md section 12): a heartbeat every `heartbeatMs`, and the `status`, `memory`,
 * `daimon`, `soul`, `turns`, `revert` and `stop` requests. Core NATS request/reply; a request that cannot be served is
 * answered with `{ error }`, never left to time out.
 */
import type { Bus, ClusterSubjects, Subscription } from "../bus/index.ts";
import {
  decodeControl,
  encodeControl,
  isControlError,
  MAX_REPLY_BYTES,
  type DaimonModeReply,
  type DaimonModeRequest,
  type FailedPerception,
  type MemoryRequest,
  type RevertReply,
  type RevertRequest,
  type SoulDetailReply,
  type SoulMemoryReply,
  type StatusRequest,
  type TurnsReply,
  type TurnsRequest,
} from "./controlProtocol.ts";
import { ControlRequestError } from "./controlRequestError.ts";

export interface ControlHandlers {
  /** The heartbeat's body, encoded (nodeStatusReply.ts keeps it under one message). */
  heartbeat(): Uint8Array;
  /** The `status` reply, encoded. */
  status(request: StatusRequest): Uint8Array;
  memory(soulId: string): SoulMemoryReply;
  daimon(request: DaimonModeRequest): DaimonModeReply;
  soul(soulId: string): SoulDetailReply;
  turns(request: TurnsRequest): TurnsReply;
  /** Resolves once the soul has gone back, between two turns. */
  revert(request: RevertRequest): Promise<RevertReply>;
  /** Called after the reply has gone out. */
  stop(): void;
}

export interface NodeControl {
  /** Publishes a heartbeat now (state changes are not left waiting for the next tick). */
  beat(): void;
  stop(): Promise<void>;
}


export function startNodeControl(
  bus: Bus,
  subjects: ClusterSubjects,
  nodeId: string,
  heartbeatMs: number,
  handlers: ControlHandlers,
  onError: (err: unknown, what: string) => void,
): NodeControl {
  const heartbeatSubject = subjects.node(nodeId, "heartbeat");
  const beat = () => {
    try {
      bus.publish(heartbeatSubject, handlers.heartbeat()).catch((err: unknown) => onError(err, "heartbeat"));
    } catch (err) {
      onError(err, "heartbeat");
    }
  };
  // Not unref'd: a running node is a server, and its heartbeat is what keeps a process that
  // has no socket (the in-process bus) alive until it is stopped.
  const timer = setInterval(beat, heartbeatMs);

  // A reply already encoded (a status body) goes as it is.
  const serve = (verb: string, answer: (request: Record<string, unknown>) => object | Promise<object>, after?: () => void): Subscription =>
    bus.subscribe(subjects.node(nodeId, verb), (msg) => {
      const request = msg.data.length === 0 ? {} : decodeControl<Record<string, unknown>>(msg.data);
      const respond = (reply: object) => {
        msg.respond(reply instanceof Uint8Array ? reply : encodeControl(reply));
        after?.();
      };
      if (isControlError(request)) return respond({ ...request, code: "bad-request" });
      try {
        const reply = answer(request);
        if (reply instanceof Promise) reply.then(respond, (err: unknown) => respond(controlError(err)));
        else respond(reply);
      } catch (err) {
        respond(controlError(err));
      }
    });

  const subs = [
    serve("status", (req) => {
      const request = statusRequest(req);
      return typeof request === "string" ? { error: request, code: "bad-request" } : handlers.status(request);
    }),
    serve("memory", (req) => {
      const { soulId } = req as Partial<MemoryRequest>;
      if (typeof soulId !== "string") return { error: "memory needs { soulId }" };
      return fitted(handlers.memory(soulId));
    }),
    serve("daimon", (req) => {
      const { soulId, mode, name } = req as Partial<DaimonModeRequest>;
      if (typeof soulId !== "string" || typeof mode !== "string") return { error: "daimon needs { soulId, mode }" };
      return handlers.daimon({ soulId, mode, ...(typeof name === "string" ? { name } : {}) });
    }),
    serve("soul", (req) => {
      const { soulId } = req as { soulId?: unknown };
      if (typeof soulId !== "string") return { error: "soul needs { soulId }", code: "bad-request" };
      return fitted(handlers.soul(soulId));
    }),
    serve("turns", (req) => {
      const { soulId, before, limit } = req as { soulId?: unknown; before?: unknown; limit?: unknown };
      if (typeof soulId !== "string") return { error: "turns needs { soulId }", code: "bad-request" };
      if (before !== undefined && !Number.isSafeInteger(before)) return { error: "turns: before must be a turn number", code: "bad-request" };
      if (limit !== undefined && !Number.isSafeInteger(limit)) return { error: "turns: limit must be a whole number", code: "bad-request" };
      return handlers.turns({ soulId, ...(before !== undefined ? { before: before as number } : {}), ...(limit !== undefined ? { limit: limit as number } : {}) });
    }),
    serve("revert", (req) => {
      const { soulId, turn, by } = req as { soulId?: unknown; turn?: unknown; by?: unknown };
      if (typeof soulId !== "string" || !Number.isSafeInteger(turn)) return { error: "revert needs { soulId, turn }", code: "bad-request" };
      return handlers.revert({ soulId, turn: turn as number, ...(typeof by === "string" ? { by } : {}) });
    }),
    serve("stop", () => ({ ok: true, node: nodeId }), () => setImmediate(() => handlers.stop())),
  ];
  beat();

  return {
    beat,
    async stop() {
      clearInterval(timer);
      for (const s of subs) s.unsubscribe();
      await Promise.all(subs.map((s) => s.closed));
    },
  };
}

/** The `status` request's optional fields, checked; a string says what is wrong. */
function statusRequest(req: Record<string, unknown>): StatusRequest | string {
  const { soulIds, after, limit } = req;
  if (soulIds !== undefined && !(Array.isArray(soulIds) && soulIds.every((id) => typeof id === "string"))) return "status: soulIds must be an array of soul ids";
  if (after !== undefined && typeof after !== "string") return "status: after must be a soul id";
  if (limit !== undefined && !(Number.isSafeInteger(limit) && (limit as number) >= 1)) return "status: limit must be a whole number of at least 1";
  if (soulIds !== undefined && (after !== undefined || limit !== undefined)) return "status: soulIds cannot be paged (no after or limit with it)";
  return {
    ...(soulIds !== undefined ? { soulIds: soulIds as string[] } : {}),
    ...(after !== undefined ? { after: after as string } : {}),
    ...(limit !== undefined ? { limit: limit as number } : {}),
  };
}

function controlError(err: unknown): object {
  const message = err instanceof Error ? err.message : String(err);
  return err instanceof ControlRequestError ? { error: message, code: err.code } : { error: message };
}

/**
 * The reply, with the oldest memories left out until it fits in one message; failed perceptions
 * are listed whole only while they fit, else with their reasons alone.
 */
function fitted<R extends { workingMemory: unknown; truncated?: boolean; failedPerceptions?: FailedPerception[] }>(whole: R): R {
  if (encodeControl(whole).length <= MAX_REPLY_BYTES) return whole;
  const reply = whole.failedPerceptions ? { ...whole, failedPerceptions: whole.failedPerceptions.map((f): FailedPerception => ({ ...f, perception: null })) } : whole;
  if (encodeControl(reply).length <= MAX_REPLY_BYTES) return { ...reply, truncated: true };
  const wm = reply.workingMemory as { memories?: unknown[] } | null;
  if (!wm || !Array.isArray(wm.memories)) return reply;
  let memories = wm.memories;
  let out = reply;
  while (memories.length > 1) {
    memories = memories.slice(Math.ceil(memories.length / 4));
    out = { ...reply, workingMemory: { ...wm, memories }, truncated: true };
    if (encodeControl(out).length <= MAX_REPLY_BYTES) return out;
  }
  return out;
}
