import { indentNicely } from "../indentNicely.ts";
import { createVerbStep } from "./verbStep.ts";

/**
 * What the soul says out loud. The answer is appended as `Soul said: "..."` (the verb is
 * the caller's) and returned without that prefix and quotes, streamed the same way.
 */
export const externalDialog = createVerbStep({
  name: "externalDialog",
  defaultVerb: "said",
  command: (name, verb, instructions) => indentNicely`
    Model the mind of ${name}.

    ## Instructions
    * DO NOT include actions (for example, do NOT add non-verbal items like *John Smiles* or *John Nods*, etc).
    * DO NOT include internal thoughts (for example, do NOT respond with John thought: "...").
    * If necessary, use all CAPS to emphasize certain words.

    ${instructions}

    Please reply with the next utterance from ${name}. Use the format: ${name} ${verb}: "..."
  `,
});
