import type { Bus } from "../../runtime/bus/index.ts";
import { assertName, BusTimeoutError, clusterSubjects, NoRespondersError, plainMsgpackProblem, redactSecrets } from "../../runtime/bus/index.ts";
import { DEFAULT_TOOL_TIMEOUT_MS, errorMessage, ToolError, ToolInputError, ToolTimeoutError, type Tool } from "./Tool.ts";
import { decodeToolReply, encodeToolBody, redactedHead } from "./toolWire.ts";

export interface RemoteToolOptions {
  bus: Bus;
  cluster: string;
  name: string;
  /** What the model is told of it; the actor owns the real schema and checks it again. */
  description?: string;
  inputSchema?: Record<string, unknown>;
  idempotent?: boolean;
  timeoutMs?: number;
}

/** The most of a tool actor's own error message passed on (to the process, the model, the events). */
const MAX_MESSAGE_CHARS = 1024;

/**
 * The client side of a tool actor: a Tool whose run is a request on the tool's call subject.
 * The input is checked where the tool lives (the actor answers `input` errors); here it is
 * passed through as given, once it is known to be plain msgpack (PROTOCOL.md §4). The reply is
 * checked as envelopes are: one that breaks §4 or §14 is refused with the rule, never taken.
 */
export function remoteTool(options: RemoteToolOptions): Tool {
  const name = assertName("tool", options.name);
  const subject = clusterSubjects(options.cluster).toolCall(name);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const { bus } = options;
  return {
    name,
    description: options.description ?? `the ${name} tool (served by a tool actor)`,
    inputSchema: options.inputSchema ?? { type: "object" },
    idempotent: options.idempotent ?? false,
    timeoutMs,
    remote: true,
    parse: (input) => input,
    async run(input, ctx) {
      const request = encodeToolBody({ v: 1, callId: ctx.callId, soulId: ctx.soulId, tool: name, input, timeoutMs });
      // What a Date or a Map would become, no actor in another language could read: refused here, not there.
      const unsendable = plainMsgpackProblem(request, "request");
      if (unsendable) throw new ToolInputError(name, `the input cannot be sent to a tool actor: ${unsendable}`);
      let bytes: Uint8Array;
      try {
        bytes = await bus.request(subject, request, { timeoutMs });
      } catch (err) {
        if (err instanceof BusTimeoutError) throw new ToolTimeoutError(name, timeoutMs);
        if (err instanceof NoRespondersError) throw new ToolError(name, `no tool actor serves ${name} (no responders on ${subject})`);
        throw new ToolError(name, `request to tool ${name} failed: ${errorMessage(err)}`);
      }
      const decoded = decodeToolReply(bytes);
      if (!decoded.ok) throw new ToolError(name, `tool ${name} sent a reply that is refused: ${decoded.reason} (${bytes.length} bytes, head ${JSON.stringify(redactedHead(bytes))})`);
      const { reply } = decoded;
      if (reply.ok) return reply.value;
      const message = redactSecrets(reply.error.message).slice(0, MAX_MESSAGE_CHARS);
      if (reply.error.kind === "input") throw new ToolInputError(name, message);
      if (reply.error.kind === "timeout") throw new ToolTimeoutError(name, timeoutMs);
      throw new ToolError(name, `tool ${name} failed: ${message}`);
    },
  };
}
