/**
 * Claudius, Artifex Maximus: a craftsman-scholar soul on the single-call cognitive pipeline,
 * with the process graph of mental-processes.md and an ISM phase for open-ended problems.
 *
 *   greeting ──▶ main ──(emotionalState=frustrated)──▶ frustrated
 *                 ▲ │                                   │  │
 *                 │ └─(open problem)─▶ problemSolving    │  │ (neutral | engaged) ──▶ main
 *                 │       (ISM)  Respond ──▶ main        │  │
 *                 │              Escalate ──▶ deepWork   │  └ (focused) ──▶ deepWork
 *                 └──────────(task complete)──────────── deepWork
 *
 * Every pipeline process makes exactly one model call per turn; only problemSolving, reached
 * for open-ended problems, makes more (the ISM's choices and actions). See each process's file
 * for its signals, and signals.ts for the open-problem and task-complete markers.
 */
import { readFileSync } from "node:fs";
import { defineSoul, type SoulBlueprint } from "../../actors/soul/index.ts";
import { deepWorkProcess } from "./deepWork.ts";
import { frustratedProcess } from "./frustrated.ts";
import { greetingProcess } from "./greeting.ts";
import { mainProcess } from "./main.ts";
import { claudiusMemoryIntegrator } from "./memoryIntegrator.ts";
import type { ClaudiusContext, ClaudiusOptions } from "./options.ts";
import { problemSolvingProcess } from "./problemSolving.ts";

export type { ClaudiusOptions } from "./options.ts";
export { CLAUDIUS_MODES, PIPELINE_PROCESSES, PROBLEM_SOLVING, pipelineKeyOf, processOfPipelineKey, type ClaudiusMode } from "./modes.ts";
export { ESCALATED_TASK, OPEN_PROBLEM_MARKER, TASK_COMPLETE_MARKER, completesTask, flagsOpenProblem } from "./signals.ts";
export { PROBLEM_SOLVING_GOAL, PROBLEM_SOLVING_PLAYBOOK, handBack } from "./problemSolving.ts";
export { userIdOf, type ChainParams } from "./pipelineTurn.ts";
export { claudiusTools, clockTool, createNotesTool, NOTES_NAMESPACE, type Note } from "./tools.ts";

/** The bundled soul.md. */
export const claudiusPersona = readFileSync(new URL("./soul.md", import.meta.url), "utf8");

export const CLAUDIUS_DEFAULT_MAX_LOOPS = 4;

/** A Claudius blueprint; `claudius` is this with no options. */
export function createClaudius(options: ClaudiusOptions = {}): SoulBlueprint {
  const ctx: ClaudiusContext = {
    name: "Claudius",
    persona: options.persona ?? claudiusPersona,
    pipeline: { ...(options.pipeline ?? {}) },
    userModels: options.userModels,
    maxLoops: options.maxLoops ?? CLAUDIUS_DEFAULT_MAX_LOOPS,
    research: options.research,
  };
  return defineSoul({
    name: ctx.name,
    persona: ctx.persona,
    initialProcess: "greeting",
    processes: {
      greeting: { process: greetingProcess(ctx), next: ["main"] },
      main: { process: mainProcess(ctx), next: ["frustrated", "problemSolving"] },
      frustrated: { process: frustratedProcess(ctx), next: ["main", "deepWork"] },
      deepWork: { process: deepWorkProcess(ctx), next: ["main"] },
      problemSolving: { process: problemSolvingProcess(ctx), next: ["main", "deepWork"] },
    },
    memoryIntegrator: claudiusMemoryIntegrator,
    ...(options.models ? { models: options.models } : {}),
  });
}

/** Claudius as registered in `builtinSouls`: user models in its store through useUserModels(), the context's default model. */
export const claudius: SoulBlueprint = createClaudius();
