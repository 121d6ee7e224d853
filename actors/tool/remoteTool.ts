import type { Bus } from "../../runtime/bus/index.ts";
import { BusTimeoutError, clusterSubjects, NoRespondersError } from "../../runtime/bus/index.ts";
import { assertName } from "../../runtime/bus/index.ts";
import { DEFAULT_TOOL_TIMEOUT_MS, errorMessage, ToolError, ToolInputError, ToolTimeoutError, type Tool } from "./Tool.ts";
import { decodeToolReply, encodeToolBody } from "./toolWire.ts";

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

/**
 * The client side of a tool actor: a Tool whose run is a request on the tool's call subject.
 * The input is checked where the tool lives (the actor answers `input` errors); here it is
 * passed through as given.
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
      let bytes: Uint8Array;
      try {
        bytes = await bus.request(subject, request, { timeoutMs });
      } catch (err) {
        if (err instanceof BusTimeoutError) throw new ToolTimeoutError(name, timeoutMs);
        if (err instanceof NoRespondersError) throw new ToolError(name, `no tool actor serves ${name} (no responders on ${subject})`);
        throw new ToolError(name, `request to tool ${name} failed: ${errorMessage(err)}`);
      }
      const decoded = decodeToolReply(bytes);
      if (!decoded.ok) throw new ToolError(name, `tool ${name} answered garbage: ${decoded.reason}`);
      const { reply } = decoded;
      if (reply.ok) return reply.value;
      if (reply.error.kind === "input") throw new ToolInputError(name, reply.error.message);
      if (reply.error.kind === "timeout") throw new ToolTimeoutError(name, timeoutMs);
      throw new ToolError(name, `tool ${name} failed: ${reply.error.message}`);
    },
  };
}
