/**
 * Stately inspector wiring: where a soul's (or a whole node's) inspection events go, and what
 * of them may leave the process; and the debugger's server (docs/DEBUGGER.md), which watches a
 * whole cluster over the bus.
 */
export { browserInspection, createInspection } from "./inspection.ts";
export type { Inspection, InspectTarget } from "./inspection.ts";
export { InspectorSocket } from "./InspectorSocket.ts";
export { REDACTED, sanitizeContext, sanitizeEvent, sanitizeValue } from "./sanitize.ts";
export { DEFAULT_DEBUG_PORT, startDebugger, type DebuggerHandle, type DebuggerOptions } from "./debugger/DebuggerServer.ts";
export type { FleetNode, FleetSnapshot, FleetSoul, FleetStatus } from "./debugger/FleetView.ts";
// The machines as createMachine JSON, for Stately's tools (`ensoul export`) and the debugger page.
export { bridgeMachineJson, daimonMachineJson, ISM_STATE, processEvent, soulMachineJson } from "./machineJson.ts";
export type { JsonObject, JsonValue, MachineJson, StateJson, TransitionJson } from "../../actors/vocabulary/index.ts";
