/**
 * The ensoul side of the port: the blueprint Open Souls would infer from the folder (the
 * persona in soul.md, the initial process, the processes and where each may hand over).
 * The process files themselves are Open Souls code with ensoul import paths.
 */
import { readFileSync } from "node:fs";
import { defineSoul } from "../../../../actors/soul/index.ts";
import conversationProcess from "./conversationProcess.ts";
import deescalationProcess from "./deescalationProcess.ts";
import introduction from "./introduction.ts";

export default defineSoul({
  name: "Samantha",
  persona: readFileSync(new URL("./soul.md", import.meta.url), "utf8"),
  initialProcess: introduction,
  processes: {
    introduction: { process: introduction, next: ["conversationProcess"] },
    conversationProcess: { process: conversationProcess, next: ["deescalationProcess"] },
    deescalationProcess: { process: deescalationProcess, next: ["conversationProcess"] },
  },
});
