/**
 * problemSolving: the open-ended phase, an Implicit Semantic Machine (ism-pattern.md's hybrid
 * architecture: main -> ISM -> main). `main` hands over with executeNow when its monologue
 * flags an open problem, so the ISM works on the same message; the soul machine runs the ISM
 * machine as this process state's sub-machine.
 *
 * Actions:
 * - Think: a monologue on what is really asked and where the difficulty is; loops.
 * - Research: the `research` option's findings when the soul has one, else its tools (clock,
 *   notes: toolResearch.ts) when the host gave them, otherwise recall (a
 *   monologue on what Claudius knows and would need to verify); loops.
 * - Respond: the worked answer, streamed; ends the ISM and returns to `main` (next message).
 * - Escalate: the problem is a substantial piece of work: it becomes the current task, the mood
 *   `focused`, and the soul goes to `deepWork` at once (executeNow), which answers the message
 *   with its own pipeline call and stays on the task until it is complete. `currentTask` holds
 *   a reference to the message (ESCALATED_TASK), never the person's words: the message is in
 *   the prompt, fenced, and deepWork asks the model to name the task in its own words.
 *
 * The phase always hands back. An ISM that ends without a transition (the model said DONE
 * before responding, the loops ran out, a failure) would otherwise leave the soul in the ISM
 * with the message unanswered: those go to `main` with executeNow, which answers with one
 * pipeline call (and does not flag the message again). An ISM interrupted by a newer message
 * goes to `main` without executeNow: the newer message is the one to answer.
 */
import { ISM_PROCESS, ismProcess, runIsm, type IsmAction, type IsmMentalProcess, type IsmOutput } from "../../actors/ism/index.ts";
import { useActions, usePerceptions, type MentalProcess, type ProcessResult } from "../../actors/soul/index.ts";
import { externalDialog, internalMonologue, neutralizeTags, UNTRUSTED_KEY, type WorkingMemory } from "../../runtime/cognition/index.ts";
import { pipelineKeyOf, PROBLEM_SOLVING } from "./modes.ts";
import { ESCALATED_TASK } from "./signals.ts";
import type { ClaudiusContext } from "./options.ts";
import type { ChainParams } from "./pipelineTurn.ts";
import { useSoulState } from "./soulStateMemory.ts";
import { toolResearch } from "./toolResearch.ts";

export const PROBLEM_SOLVING_GOAL = "Work the person's open-ended problem through and give them an answer that holds.";

export const PROBLEM_SOLVING_PLAYBOOK = [
  "You are Claudius, Artifex Maximus, at the bench with a problem that deserves more than a quick reply.",
  "- Think first: what is actually being asked, what constrains it, where the difficulty lies.",
  "- Research when a fact, a constraint or prior art decides the matter; not for what you already know.",
  "- Respond once you can give a precise answer. Respond ends the deliberation; respond only once.",
  "- Escalate instead of Respond when the problem is a substantial piece of work that needs sustained focus over several exchanges: you will take it up as your current task.",
  "- Do not repeat an action whose result is already in the decision log.",
].join("\n");

/** Findings from outside are cut to this length before they enter memory (marked untrusted: see Research). */
const FINDINGS_MAX_CHARS = 4000;

function actions(ctx: ClaudiusContext): IsmAction[] {
  return [
    {
      name: "Think",
      description: "Think the problem through: what is asked, what constrains it, where the difficulty lies.",
      handleActionUse: async (workingMemory, _internal, recurse) => {
        const [thought] = await internalMonologue(workingMemory, {
          instructions:
            "Think the problem through as a craftsman would: what is actually being asked, what constrains it, where the difficulty lies, and what a good answer must contain.",
          verb: "pondered",
        });
        return recurse({ workingMemory: thought });
      },
    },
    {
      name: "Research",
      description: "Gather what bears on the problem: facts, constraints, prior art, known pitfalls.",
      handleActionUse: async (workingMemory, _internal, recurse) => {
        const question = usePerceptions().invokingPerception.content;
        // The research option first; else the turn's tools (clock, notes) when the host gave them.
        const raw = ctx.research ? await ctx.research(question) : await toolResearch(question);
        if (raw !== undefined) {
          const findings = neutralizeTags(raw.length > FINDINGS_MAX_CHARS ? `${raw.slice(0, FINDINGS_MAX_CHARS - 1)}…` : raw);
          const { soulName } = workingMemory;
          // Findings are outside text (notes hold what people said; a research hook may read the
          // web), so they are marked untrusted and every prompt fences them under this label
          // (untrustedMemory.ts). The name says whose finding it is: a fence without one says "User".
          return recurse({
            workingMemory: workingMemory.withMemory({
              role: "assistant",
              name: soulName,
              content: `${soulName} found out: "${findings}"`,
              metadata: { step: "research", [UNTRUSTED_KEY]: `What ${soulName} found out while researching` },
            }),
          });
        }
        const [recalled] = await internalMonologue(workingMemory, {
          instructions:
            "Recall what you know that bears on this problem: facts, constraints, prior art, known pitfalls. Say plainly what you do not know and would have to verify.",
          verb: "recalled",
        });
        return recurse({ workingMemory: recalled });
      },
    },
    {
      name: "Respond",
      description: "Give the person the worked answer. Ends the deliberation.",
      handleActionUse: async (workingMemory) => {
        const [memory, stream] = await externalDialog(
          workingMemory,
          {
            instructions:
              "Give the answer you have worked out: lead with it, then the reasoning that earns it, precise and in your speaking style. Say what remains uncertain.",
            verb: "explained",
          },
          { stream: true },
        );
        useActions().speak(stream);
        await memory.finished;
        useSoulState().save({ currentProcess: pipelineKeyOf("main") });
        return [memory, "main"];
      },
    },
    {
      name: "Escalate",
      description: "The problem is a substantial piece of work that needs sustained focus: take it up as the current task.",
      handleActionUse: (workingMemory) => {
        const soulState = useSoulState();
        const task = soulState.state.currentTask || ESCALATED_TASK;
        soulState.save({ emotionalState: "focused", currentTask: task, currentProcess: pipelineKeyOf("deepWork") });
        const params: ChainParams = { from: PROBLEM_SOLVING, escalated: true };
        return [workingMemory, "deepWork", { executeNow: true, params }];
      },
    },
  ];
}

/** Where the phase hands back to, whatever way the ISM ended (see the file's comment). */
export function handBack(output: IsmOutput, toProcessReturn: (output: IsmOutput) => ProcessResult): ProcessResult {
  if (output.outcome === "transition" && output.next) return toProcessReturn(output);
  if (output.outcome === "interrupted") return [output.workingMemory, "main"];
  const params: ChainParams = { from: PROBLEM_SOLVING, ismOutcome: output.outcome };
  return [output.workingMemory, "main", { executeNow: true, params }];
}

/**
 * The ISM process. `ismProcess` maps an ISM that ends without a transition to "stay in this
 * process"; Claudius's phase must always hand back, so the process keeps ismProcess's marker
 * (the soul machine runs the same ISM machine with the same input) and only replaces how the
 * output becomes the process's return value.
 */
export function problemSolvingProcess(ctx: ClaudiusContext): IsmMentalProcess {
  const config = {
    name: PROBLEM_SOLVING,
    goal: PROBLEM_SOLVING_GOAL,
    playbook: PROBLEM_SOLVING_PLAYBOOK,
    actions: actions(ctx),
    maxLoops: ctx.maxLoops,
  };
  const inner = ismProcess(config);
  const marker = inner[ISM_PROCESS];
  const toReturn = (output: IsmOutput) => handBack(output, marker.toProcessReturn);
  // Called as a plain function (a runtime that does not read the marker), it does the same.
  const problemSolving: MentalProcess = async ({ workingMemory }: { workingMemory: WorkingMemory }) =>
    toReturn(await runIsm({ workingMemory, goal: config.goal, playbook: config.playbook, actions: config.actions, maxLoops: config.maxLoops }));
  Object.defineProperty(problemSolving, ISM_PROCESS, { value: Object.freeze({ ...marker, toProcessReturn: toReturn }), enumerable: false });
  return problemSolving as IsmMentalProcess;
}
