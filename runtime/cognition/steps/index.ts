export { externalDialog } from "./externalDialog.ts";
export type { VerbInstructions } from "./verbStep.ts";
export { internalMonologue } from "./internalMonologue.ts";
export { mentalQuery } from "./mentalQuery.ts";
export { decision, choiceValues, type DecisionInput, type EnumLike } from "./decision.ts";
export { brainstorm } from "./brainstorm.ts";
export { instruction } from "./instruction.ts";
export { summarize } from "./summarize.ts";
export { toolUse, TOOL_USE_DEFAULT_ROUNDS, type ToolUseCall, type ToolUseOptions, type ToolUseResult } from "./toolUse.ts";
