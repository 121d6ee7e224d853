/**
 * Stately inspector wiring: where a soul's (or a whole node's) inspection events go, and what
 * of them may leave the process.
 */
export { browserInspection, createInspection } from "./inspection.ts";
export type { Inspection, InspectTarget } from "./inspection.ts";
export { InspectorSocket } from "./InspectorSocket.ts";
export { REDACTED, sanitizeContext, sanitizeEvent, sanitizeValue } from "./sanitize.ts";
