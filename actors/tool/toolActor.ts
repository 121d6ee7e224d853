import type { Bus, BusMessage, Subscription } from "../../runtime/bus/index.ts";
import { clusterSubjects, deadLetter, MSG_ID_HEADER } from "../../runtime/bus/index.ts";
import { componentLogger } from "../../runtime/log/index.ts";
import { errorMessage, ToolInputError, ToolTimeoutError, withTimeout, type Tool } from "./Tool.ts";
import { decodeToolRequest, encodeToolBody, type ToolCallReply } from "./toolWire.ts";

/**
 * A tool actor: one tool served on `ensoul.<cluster>.tool.<name>.call` in queue group
 * `tool-<name>`, so any number of instances (on any node, or outside ensoul) share the calls
 * and each call is answered once. It does not gate: the calling soul's gate chain has
 * already passed the call (TurnToolBox.ts). Calls are answered concurrently; a malformed
 * request gets a `malformed` error reply and goes to dead-letter.
 */

export interface ToolActorStats {
  served: number;
  failed: number;
  malformed: number;
}

export interface ToolActorHandle {
  readonly tool: string;
  readonly subject: string;
  stats(): ToolActorStats;
  /** Resolves once the bus has taken the subscription; rejects with why not (permissions, a closed bus). */
  ready(): Promise<void>;
  /** Stops taking calls; resolves once the calls already taken have been answered. */
  stop(): Promise<void>;
}

export function serveToolActor(bus: Bus, cluster: string, tool: Tool): ToolActorHandle {
  const subject = clusterSubjects(cluster).toolCall(tool.name);
  const stats: ToolActorStats = { served: 0, failed: 0, malformed: 0 };
  const inFlight = new Set<Promise<void>>();
  const sub: Subscription = bus.subscribe(
    subject,
    (msg) => {
      // Never rejects (the catch is first), and leaves the set once answered.
      const work: Promise<void> = answer(bus, cluster, tool, msg, stats)
        .catch((err) => componentLogger("tool").error(`tool actor ${tool.name} failed to answer: ${errorMessage(err)}`))
        .finally(() => inFlight.delete(work));
      inFlight.add(work);
    },
    { queue: `tool-${tool.name}` },
  );
  return {
    tool: tool.name,
    subject,
    stats: () => ({ ...stats }),
    ready: () => sub.accepted(),
    async stop() {
      sub.unsubscribe();
      await Promise.allSettled([...inFlight]);
    },
  };
}

async function answer(bus: Bus, cluster: string, tool: Tool, msg: BusMessage, stats: ToolActorStats): Promise<void> {
  const reply = (body: ToolCallReply) => msg.reply !== undefined && msg.respond(encodeToolBody(body));
  const decoded = decodeToolRequest(msg.data);
  const reason = !decoded.ok
    ? decoded.reason
    : decoded.request.tool !== tool.name
      ? `call names tool ${decoded.request.tool}, this actor serves ${tool.name}`
      : msg.reply === undefined
        ? "not a request (no reply subject)"
        : // Per the protocol, a message with a stream msg id belongs to a JetStream publisher waiting for its ack.
          msg.headers?.[MSG_ID_HEADER] !== undefined
          ? "a stream publish on a tool call subject"
          : null;
  if (reason !== null || !decoded.ok) {
    stats.malformed++;
    const why = reason ?? "malformed";
    if (msg.headers?.[MSG_ID_HEADER] === undefined) reply({ v: 1, ok: false, error: { kind: "malformed", message: why } });
    await deadLetter(bus, cluster, { subject: msg.subject, reason: why, data: msg.data });
    return;
  }
  const { request } = decoded;
  try {
    const input = tool.parse(request.input);
    // The server gives up when the caller does: nobody is waiting after that.
    const timeoutMs = Math.min(request.timeoutMs, tool.timeoutMs);
    const value = await withTimeout(tool.name, timeoutMs, undefined, (signal) => tool.run(input, { callId: request.callId, soulId: request.soulId, signal }));
    stats.served++;
    reply({ v: 1, ok: true, value: value ?? null });
  } catch (err) {
    stats.failed++;
    const kind = err instanceof ToolInputError ? "input" : err instanceof ToolTimeoutError ? "timeout" : "error";
    reply({ v: 1, ok: false, error: { kind, message: errorMessage(err) } });
  }
}
