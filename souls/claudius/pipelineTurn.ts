/**
 * One turn of the unified cognitive pipeline, as every pipeline process of Claudius runs it:
 * exactly one model call (`streamPipeline`), whose dialogue is spoken while it streams, then
 * the bookkeeping the reference's `parse_response` does after the call: the user model saved
 * as a new version with its change note, the soul state kept in soul memory. The process that
 * called it decides where the soul goes and then calls `settle` with that process.
 */
import { PERSON_META_KEYS, useActions, usePerceptions, type Perception, type ProcessParams } from "../../actors/soul/index.ts";
import {
  DEFAULT_REGION,
  pipelineMarker,
  regionOf,
  streamPipeline,
  type Memory,
  type PipelineOptions,
  type PipelineResult,
  type SoulState,
  type WorkingMemory,
} from "../../runtime/cognition/index.ts";
import { pipelineKeyOf, PIPELINE_PROCESSES, PROBLEM_SOLVING, type ClaudiusMode } from "./modes.ts";
import type { ClaudiusContext } from "./options.ts";
import { takeRecall } from "./recall.ts";
import { useSoulState } from "./soulStateMemory.ts";
import { turnKeeper } from "./userModelKeeper.ts";

/**
 * Conversation memories kept in the working memory (context regions are always kept). The
 * prompt only ever shows the last few and the gates read the last 20; the rest would only
 * make every commit of the soul's state bigger.
 */
export const CONVERSATION_MEMORIES_KEPT = 200;

/** Params a process hands on when it chains back into a pipeline process in the same turn. */
export interface ChainParams extends ProcessParams {
  /** The process that handed over (with executeNow) for the same perception. */
  from?: string;
  /** problemSolving -> deepWork: the ISM escalated the problem. */
  escalated?: boolean;
  /** problemSolving -> main: how the ISM ended without answering (done, exhausted, failed). */
  ismOutcome?: string;
}

export interface PipelineTurn {
  /** The working memory after the turn (without the recalled whisper). */
  memory: WorkingMemory;
  result: PipelineResult;
  /** The recalled whisper's memory, if the turn had one, for a process this turn chains to. */
  recall: Memory | undefined;
  /** The soul state as the turn found it. */
  before: SoulState;
  /** Stores the turn's soul state in soul memory, `currentProcess` set to where the soul goes. */
  settle(nextProcess: string, changes?: Partial<SoulState>): void;
}

export async function runPipelineTurn(
  ctx: ClaudiusContext,
  mode: ClaudiusMode,
  workingMemory: WorkingMemory,
  params: ChainParams,
): Promise<PipelineTurn> {
  const { invokingPerception: perception } = usePerceptions();
  const { speak, log } = useActions();
  const soulState = useSoulState();
  const { memory: base, whisper, recall } = takeRecall(workingMemory);
  const userId = userIdOf(perception);
  const keeper = mode.usesUserModel ? turnKeeper() : undefined;
  const latest = keeper?.latest(userId);

  const options: PipelineOptions = {
    message: { text: messageText(perception), userName: perception.name },
    persona: ctx.persona,
    soulState: { ...soulState.state, currentProcess: mode.pipeline.name },
    processes: PIPELINE_PROCESSES,
    config: { ...ctx.pipeline, ...mode.config },
    ...(whisper ? { whisper } : {}),
    ...(latest ? { userModel: latest.markdown } : {}),
  };
  const stream = streamPipeline(base, options);
  const speaking = await speakWhenAny(stream.dialogue, speak);
  const [after, result] = await stream.done;
  if (!speaking) log("the answer had nothing to say; nothing was spoken", { issues: result.issues });

  let memory = params.from === PROBLEM_SOLVING ? withoutRepeatedPerception(after, base.length) : after;
  memory = trimConversation(memory, CONVERSATION_MEMORIES_KEPT);

  if (keeper && result.userModelUpdate !== undefined && result.userModelUpdate.trim() !== "") {
    try {
      const saved = await keeper.save(userId, result.userModelUpdate, result.changeNote ?? "");
      log(`user model of ${userId}: version ${saved.version}`, { changeNote: saved.changeNote });
    } catch (error) {
      // The answer has been given; losing one rewrite of the model must not lose the turn.
      log(`user model of ${userId} not saved: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (result.soulStateRejected) log("soul state update lines refused", { rejected: result.soulStateRejected });
  if (result.issues.length) log("pipeline answer fallbacks", { issues: result.issues });

  return {
    memory,
    result,
    recall,
    before: soulState.state,
    settle(nextProcess, changes = {}) {
      soulState.save({ ...result.soulState, ...changes, currentProcess: pipelineKeyOf(nextProcess) });
    },
  };
}

/**
 * Speaks the dialogue as it streams, once its first chunk is there: an answer with nothing to
 * say (an empty `<external_dialogue>`) then speaks nothing rather than an empty message.
 * Returns whether it spoke. A stream that fails before its first chunk throws here.
 */
async function speakWhenAny(dialogue: AsyncIterable<string>, speak: (text: AsyncIterable<string>) => void): Promise<boolean> {
  const chunks = dialogue[Symbol.asyncIterator]();
  let first = await chunks.next();
  while (!first.done && first.value === "") first = await chunks.next();
  if (first.done) return false;
  const head = first.value;
  speak({
    async *[Symbol.asyncIterator]() {
      yield head;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    },
  });
  return true;
}

/**
 * The person's id for the user-model store: a bridge's `meta.userId` (a stable platform id)
 * when there is one, else the name they spoke under.
 */
export function userIdOf(perception: Pick<Perception, "name" | "meta">): string {
  const meta = perception.meta;
  for (const key of PERSON_META_KEYS) {
    const value = meta?.[key];
    if (typeof value === "string" && value.trim() !== "" && value.length <= 256) return value;
  }
  const name = perception.name.trim();
  return name === "" ? "unknown" : name.slice(0, 256);
}

/** What the person did, as the message the pipeline fences: speech as it is, any other action named. */
function messageText(perception: Pick<Perception, "action" | "content">): string {
  return perception.action === "said" ? perception.content : `(${perception.action}) ${perception.content}`;
}

/**
 * A pipeline process that runs again for the same perception (the ISM handed back with
 * executeNow) records that perception a second time; the first record stands.
 */
function withoutRepeatedPerception(memory: WorkingMemory, from: number): WorkingMemory {
  return memory.filter((m, i) => i < from || pipelineMarker(m)?.kind !== "perception");
}

/** The oldest conversation memories dropped beyond `keep`; context regions stay. */
export function trimConversation(memory: WorkingMemory, keep: number): WorkingMemory {
  const conversation = memory.memories.filter((m) => regionOf(m) === DEFAULT_REGION);
  const excess = conversation.length - keep;
  if (excess <= 0) return memory;
  const dropped = new Set(conversation.slice(0, excess).map((m) => m.id));
  return memory.filter((m) => !dropped.has(m.id));
}
