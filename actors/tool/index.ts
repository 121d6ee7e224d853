export { defineTool, DEFAULT_TOOL_TIMEOUT_MS, ToolError, ToolInputError, ToolOutcomeUnknownError, ToolRejectedError, ToolTimeoutError } from "./Tool.ts";
export type { Tool, ToolDefinition, ToolRunContext } from "./Tool.ts";
export { createToolRegistry, layeredRegistry, type ToolRegistry } from "./ToolRegistry.ts";
export { TurnToolBox, TOOL_ACTION, type ToolTurn } from "./TurnToolBox.ts";
export { ledgerOf, TOOL_CALLS_NAMESPACE, type ToolCallLedger, type ToolCallRecord } from "./ToolCallLedger.ts";
export type { ToolCallOutcome, ToolEvent } from "./ToolEvent.ts";
export { serveToolActor, type ToolActorHandle, type ToolActorStats } from "./toolActor.ts";
export { remoteTool, type RemoteToolOptions } from "./remoteTool.ts";
export { decodeToolReply, decodeToolRequest, encodeToolBody, TOOL_WIRE_VERSION, type ToolCallReply, type ToolCallRequest, type ToolErrorKind } from "./toolWire.ts";
