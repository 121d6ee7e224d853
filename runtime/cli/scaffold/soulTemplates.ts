/**
 * The soul folder `ensoul init` writes: a persona, one file per mental process (a greeting,
 * a conversation, and an Implicit Semantic Machine phase for questions that need thought),
 * and the index that makes them a soul. Everything imports from `ensoul` only, as a user's
 * code does.
 */

export function soulFiles(id: string, name: string): Record<string, string> {
  return {
    [`souls/${id}/soul.md`]: `# ${name}

${name} is a warm, curious companion who listens closely, answers plainly, and asks one good
question at a time. ${name} remembers what people share and uses their names.

## Speaking style
- Short sentences, no jargon unless the person uses it first.
- Honest about what ${name} does not know.
`,
    [`souls/${id}/index.ts`]: `/**
 * ${name}: the soul this project runs. Each mental process is a file; the transitions below are
 * the ones the soul may take, and each is a real XState transition the inspector draws.
 */
import { readFileSync } from "node:fs";
import { defineSoul } from "ensoul";
import { conversation } from "./conversation.ts";
import { greeting } from "./greeting.ts";
import { solving } from "./solving.ts";

const persona = readFileSync(new URL("./soul.md", import.meta.url), "utf8");

export default defineSoul({
  name: ${JSON.stringify(name)},
  persona,
  initialProcess: greeting,
  processes: {
    greeting: { process: greeting, next: ["conversation"] },
    conversation: { process: conversation, next: ["solving"] },
    solving: { process: solving, next: ["conversation"] },
  },
});
`,
    [`souls/${id}/greeting.ts`]: `import { externalDialog, useActions, type MentalProcess } from "ensoul";

/** The first exchange: a welcome, then the conversation. */
export const greeting: MentalProcess = async ({ workingMemory }) => {
  const { speak } = useActions();
  const [memory, reply] = await externalDialog(workingMemory, "Greet the person warmly and ask what brings them here.");
  speak(reply);
  return [memory, "conversation"];
};
`,
    [`souls/${id}/conversation.ts`]: `import { externalDialog, mentalQuery, useActions, type MentalProcess } from "ensoul";

/** Talk; a question that needs real thought goes to the \`solving\` phase on the same message. */
export const conversation: MentalProcess = async ({ workingMemory }) => {
  const { speak } = useActions();
  const [thought, needsThought] = await mentalQuery(workingMemory, "The person asked a question that needs careful thought to answer well.");
  if (needsThought) return [thought, "solving", { executeNow: true }];
  const [memory, stream] = await externalDialog(workingMemory, "Answer the person in your own voice.", { stream: true });
  speak(stream);
  return memory;
};
`,
    [`souls/${id}/solving.ts`]: `import { externalDialog, internalMonologue, ismProcess, recurse, useActions } from "ensoul";

/**
 * An Implicit Semantic Machine: a goal, a playbook and actions; the model picks the next action
 * each loop until one ends the phase. Respond answers and goes back to the conversation.
 */
export const solving = ismProcess({
  name: "solving",
  goal: "Work the person's question through and answer it well.",
  playbook: ["- Think first: what is asked, and what a good answer needs.", "- Respond once you can answer plainly. Respond ends the phase."].join("\\n"),
  actions: [
    {
      name: "Think",
      description: "Think the question through.",
      handleActionUse: async (workingMemory) => {
        const [thought] = await internalMonologue(workingMemory, "Think the question through: what is asked, and what a good answer needs.");
        return recurse({ workingMemory: thought });
      },
    },
    {
      name: "Respond",
      description: "Give the answer. Ends the phase.",
      handleActionUse: async (workingMemory) => {
        const [memory, reply] = await externalDialog(workingMemory, "Give your answer, plainly.");
        useActions().speak(reply);
        return [memory, "conversation"];
      },
    },
  ],
});
`,
  };
}
