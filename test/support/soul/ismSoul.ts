/**
 * A soul whose middle process is an ISM, as in the reference's hybrid architecture:
 *
 *   greeting ──▶ problemSolving (ISM: Think / Respond / Escalate) ──▶ main
 *                       │ Escalate: [memory, expert, { executeNow: true }]
 *                       ▼
 *                    expert ──▶ main
 *
 * `controls` lets a test hold a step open or change where Escalate goes.
 */
import { externalDialog, internalMonologue } from "../../../runtime/cognition/steps/index.ts";
import { ismProcess } from "../../../actors/ism/index.ts";
import { defineSoul, useActions, usePerceptions, type MentalProcess, type ProcessRef } from "../../../actors/soul/index.ts";

export interface IsmSoulControls {
  /** Runs in Think before the monologue; a test may hold the ISM there, or throw. */
  beforeThink?: () => Promise<void> | void;
  /** Where Escalate goes (default: the expert process, by function as Open Souls does). */
  escalateTo?: () => ProcessRef;
  maxLoops?: number;
  /** The perceptions `expert` ran for, by content. */
  expertSaw?: string[];
}

export function ismSoul(controls: IsmSoulControls = {}) {
  const main: MentalProcess = async ({ workingMemory }) => {
    const [memory, answer] = await externalDialog(workingMemory, "Chat with the user.");
    useActions().speak(answer);
    return memory;
  };

  const expert: MentalProcess = async ({ workingMemory }) => {
    controls.expertSaw?.push(usePerceptions().invokingPerception.content);
    const [memory, answer] = await externalDialog(workingMemory, "Answer as the specialist.");
    useActions().speak(answer);
    return [memory, main];
  };

  const problemSolving = ismProcess({
    name: "problemSolving",
    goal: "Understand the problem the user has, and help solve it",
    playbook: "Solve the user's problem step by step",
    maxLoops: controls.maxLoops ?? 3,
    actions: [
      {
        name: "Think",
        description: "Think about the problem and access necessary knowledge",
        handleActionUse: async (workingMemory, _internalMemory, recurse) => {
          await controls.beforeThink?.();
          const [withThought] = await internalMonologue(workingMemory, "Think about the problem deeply");
          return recurse({ workingMemory: withThought, internalMemory: withThought });
        },
      },
      {
        name: "Respond",
        description: "Share findings with the user",
        handleActionUse: async (workingMemory) => {
          const [memory, stream] = await externalDialog(workingMemory, "Respond to the user", { stream: true });
          useActions().speak(stream);
          await memory.finished;
          return memory;
        },
      },
      {
        name: "Escalate",
        description: "Problem requires specialist — escalate",
        handleActionUse: async (workingMemory) => [workingMemory, controls.escalateTo?.() ?? expert, { executeNow: true }],
      },
    ],
  });

  const greeting: MentalProcess = async ({ workingMemory }) => {
    const [memory, hello] = await externalDialog(workingMemory, "Greet the user and ask what is wrong.");
    useActions().speak(hello);
    return [memory, problemSolving];
  };

  return defineSoul({
    name: "Samantha",
    persona: "Samantha helps people fix their builds.",
    initialProcess: greeting,
    processes: {
      greeting: { process: greeting, next: ["problemSolving"] },
      problemSolving: { process: problemSolving, next: ["main", "expert"] },
      expert: { process: expert, next: ["main"] },
      main: { process: main, next: ["problemSolving"] },
    },
  });
}
