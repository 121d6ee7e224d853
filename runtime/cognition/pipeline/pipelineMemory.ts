/**
 * What a pipeline turn leaves in working memory, and how the next turn reads it back. The
 * memories use the Open Souls shapes (`metadata.step` of `internalMonologue`,
 * `externalDialog`, `mentalQuery`, with `metadata.result` on a query) so Open Souls code and
 * the Samantha-Dreams gate read them the same way, plus a `pipeline` marker so the gates can
 * tell the pipeline's own bookkeeping from memories a blueprint added.
 */
import type { InputMemory, Memory } from "../Memory.ts";
import { queryMemory } from "../steps/mentalQuery.ts";
import { verbMemory } from "../steps/verbStep.ts";

export type PipelineMemoryKind = "perception" | "persona" | "monologue" | "dialogue" | "userModelCheck" | "soulStateCheck";

export interface PipelineMarker {
  kind: PipelineMemoryKind;
  /** The interaction (1-based turn of the thread) that wrote the memory. */
  interaction: number;
}

/** The region the first turn's persona and skills are kept in, ahead of the conversation. */
export const PERSONA_REGION = "pipelinePersona";

/** The statements the checks record; the gate finds the user-model one by "user model", as the reference does. */
export const USER_MODEL_CHECK_STATEMENT = "The user model needs updating after this exchange";
export const SOUL_STATE_CHECK_STATEMENT = "The soul state changed during this exchange";

export function pipelineMarker(memory: Pick<Memory, "metadata">): PipelineMarker | undefined {
  const marker = memory.metadata?.["pipeline"];
  if (marker === null || typeof marker !== "object") return undefined;
  const { kind, interaction } = marker as Partial<PipelineMarker>;
  if (typeof kind !== "string" || typeof interaction !== "number") return undefined;
  return { kind, interaction };
}

/** The interaction number of the last pipeline turn in memory, 0 when there is none. */
export function lastInteraction(memories: readonly Memory[]): number {
  for (let i = memories.length - 1; i >= 0; i--) {
    const marker = pipelineMarker(memories[i]);
    if (marker) return marker.interaction;
  }
  return 0;
}

export function perceptionMemory(text: string, userName: string, interaction: number): InputMemory {
  return {
    role: "user",
    name: userName,
    content: text,
    metadata: { step: "perception", pipeline: { kind: "perception", interaction } },
  };
}

export function personaMemory(content: string, interaction: number): InputMemory {
  return {
    role: "system",
    region: PERSONA_REGION,
    content,
    metadata: { pipeline: { kind: "persona", interaction } },
  };
}

export function monologueMemory(soulName: string, text: string, verb: string | undefined, interaction: number): InputMemory {
  return verbMemory(soulName, "internalMonologue", verb ?? "thought", text, { pipeline: { kind: "monologue", interaction } });
}

export function dialogueMemory(soulName: string, text: string, verb: string | undefined, interaction: number): InputMemory {
  return verbMemory(soulName, "externalDialog", verb ?? "said", text, { pipeline: { kind: "dialogue", interaction } });
}

/**
 * A check's verdict. `updated` says whether the turn also produced the update (a rewritten
 * user model, applied soul-state lines): the user-model cooldown counts from it.
 */
export function checkMemory(
  soulName: string,
  kind: "userModelCheck" | "soulStateCheck",
  result: boolean,
  interaction: number,
  updated = false,
): InputMemory {
  const statement = kind === "userModelCheck" ? USER_MODEL_CHECK_STATEMENT : SOUL_STATE_CHECK_STATEMENT;
  return queryMemory(soulName, statement, result, { updated, pipeline: { kind, interaction } });
}

/** The interaction of the last turn that saved a user-model rewrite, if memory still holds it. */
export function lastUserModelUpdate(memories: readonly Memory[]): number | undefined {
  for (let i = memories.length - 1; i >= 0; i--) {
    const m = memories[i];
    const marker = pipelineMarker(m);
    if (marker?.kind === "userModelCheck" && m.metadata?.["updated"] === true) return marker.interaction;
  }
  return undefined;
}
