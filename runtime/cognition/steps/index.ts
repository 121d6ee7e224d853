export { externalDialog, type VerbInstructions } from "./externalDialog.ts";
export { internalMonologue } from "./internalMonologue.ts";
export { mentalQuery } from "./mentalQuery.ts";
export { decision, choiceValues, type DecisionInput, type EnumLike } from "./decision.ts";
export { brainstorm } from "./brainstorm.ts";
export { instruction } from "./instruction.ts";
export { summarize } from "./summarize.ts";
