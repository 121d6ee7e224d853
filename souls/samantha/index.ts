import { readFileSync } from "node:fs";
import { defineSoul } from "../../actors/soul/index.ts";
import { conversation, greeting } from "./processes.ts";

const persona = readFileSync(new URL("./soul.md", import.meta.url), "utf8");

/** A small companion soul: the default for `ensoul chat`. */
export const samantha = defineSoul({
  name: "Samantha",
  persona,
  initialProcess: greeting,
  processes: {
    greeting: { process: greeting, next: ["conversation"] },
    conversation: { process: conversation },
  },
});
