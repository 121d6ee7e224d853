/** A TypeScript cluster config: it can hand the node blueprints and gates as objects. */
import { echoSoul } from "./blueprints.ts";

export default {
  cluster: "typed",
  souls: [
    { id: "echo", blueprint: echoSoul },
    { id: "sam", blueprint: "samantha", hears: ["echo"] },
  ],
  gates: [{ gate: { name: "shout", priority: 5, verify: (p: { content: string }) => ({ ...p, content: p.content.toUpperCase() }) }, souls: ["echo"] }],
};
