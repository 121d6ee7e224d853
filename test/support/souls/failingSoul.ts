/**
 * A soul whose turns fail in the two ways a person must be told about: `bye` hands over to
 * `farewell`, which `talk` does not declare as a successor, and `boom…` throws a TypeError in the
 * soul's own code (THROWN_AT says where). Anything else is echoed: `echo: <content>`.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { defineSoul, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";

const talk: MentalProcess = async ({ workingMemory }) => {
  const { content } = usePerceptions().invokingPerception;
  if (content === "bye") return [workingMemory, "farewell"];
  if (content.startsWith("boom")) {
    const settings: { voice?: { pitch: number } } = {};
    return settings.voice!.pitch as never; // the soul's bug
  }
  useActions().speak(`echo: ${content}`);
  return workingMemory;
};
const solving: MentalProcess = async ({ workingMemory }) => workingMemory;
const farewell: MentalProcess = async ({ workingMemory }) => workingMemory;

export const failingSoul = defineSoul({
  name: "Fa",
  persona: "A soul with a bug or two.",
  initialProcess: talk,
  processes: { talk: { process: talk, next: ["solving"] }, solving, farewell },
});

/** The reason of `bye`'s failure. */
export const UNDECLARED = "process 'talk' handed over to 'farewell', which it does not declare as a successor (declared: solving); the soul stays in 'talk'";

/** `<file>:<line>:<column>` of the TypeError `boom` throws, as the reason names it (relative to the working directory). */
export const THROWN_AT = (() => {
  const file = import.meta.filename;
  const lines = readFileSync(file, "utf8").split("\n");
  const line = lines.findIndex((l) => l.includes("// the soul's bug"));
  return `${relative(process.cwd(), file)}:${line + 1}:${lines[line]!.indexOf("pitch") + 1}`;
})();

/** The reason of `boom`'s failure. */
export const THROWN = `TypeError: Cannot read properties of undefined (reading 'pitch') at ${THROWN_AT}`;
