/**
 * The node's control surface on `ensoul.<cluster>.node.<nodeId>.<verb>` (controlProtocol.ts,
 * docs/PROTOCOL.md section 12): a heartbeat every `heartbeatMs`, and the `status`, `memory`,
 * `daimon` and `stop` requests. Core NATS request/reply; a request that cannot be served is
 * answered with `{ error }`, never left to time out.
 */
import type { Bus, ClusterSubjects, Subscription } from "../bus/index.ts";
import {
  decodeControl,
  encodeControl,
  isControlError,
  type DaimonModeReply,
  type DaimonModeRequest,
  type MemoryRequest,
  type NodeStatus,
  type SoulMemoryReply,
} from "./controlProtocol.ts";

export interface ControlHandlers {
  status(): NodeStatus;
  memory(soulId: string): SoulMemoryReply;
  daimon(request: DaimonModeRequest): DaimonModeReply;
  /** Called after the reply has gone out. */
  stop(): void;
}

export interface NodeControl {
  /** Publishes a heartbeat now (state changes are not left waiting for the next tick). */
  beat(): void;
  stop(): Promise<void>;
}

/** Replies stay under NATS's default max_payload with room for headers. */
const MAX_REPLY_BYTES = 1_000_000;

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
      bus.publish(heartbeatSubject, encodeControl(handlers.status())).catch((err: unknown) => onError(err, "heartbeat"));
    } catch (err) {
      onError(err, "heartbeat");
    }
  };
  // Not unref'd: a running node is a server, and its heartbeat is what keeps a process that
  // has no socket (the in-process bus) alive until it is stopped.
  const timer = setInterval(beat, heartbeatMs);

  const serve = (verb: string, answer: (request: Record<string, unknown>) => object, after?: () => void): Subscription =>
    bus.subscribe(subjects.node(nodeId, verb), (msg) => {
      const request = msg.data.length === 0 ? {} : decodeControl<Record<string, unknown>>(msg.data);
      let reply: object;
      if (isControlError(request)) reply = request;
      else {
        try {
          reply = answer(request);
        } catch (err) {
          reply = { error: err instanceof Error ? err.message : String(err) };
        }
      }
      msg.respond(encodeControl(reply));
      after?.();
    });

  const subs = [
    serve("status", () => handlers.status()),
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

/** The reply, with the oldest memories left out until it fits in one message. */
function fitted(reply: SoulMemoryReply): SoulMemoryReply {
  if (encodeControl(reply).length <= MAX_REPLY_BYTES) return reply;
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
