import { indentNicely } from "../indentNicely.ts";
import { createVerbStep } from "./verbStep.ts";

/** A private thought, appended as `Soul thought: "..."` (or the caller's verb). */
export const internalMonologue = createVerbStep({
  name: "internalMonologue",
  defaultVerb: "thought",
  command: (name, verb, instructions) => indentNicely`
    Model the mind of ${name}.

    ## Description
    ${instructions}

    ## Rules
    * Internal monologue thoughts should match the speaking style of ${name}.
    * Only respond with the format '${name} ${verb}: "..."', no additional commentary or text.
    * Follow the Description when creating the internal thought!

    Please reply with the next internal monologue thought of ${name}. Use the format: ${name} ${verb}: "..."
  `,
});
