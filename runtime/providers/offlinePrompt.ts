/**
 * What the offline model reads in the prompt's own sections: the daimonic intuition, the soul
 * state and its notes, the user model's name, and what the response format asks for (a marker to end the
 * monologue with, short answers, the verbs to use).
 *
 * It exists apart from the conversation reader because these are the soul's and the
 * runtime's words, not the person's: they are read only from system and assistant messages,
 * never from a user message, so a person cannot fake a section (a whisper, a marker
 * instruction) by typing one. The instructions are read generically (the marker is taken
 * from the instruction's text), so any soul that asks the same way is answered the same way.
 */
import type { ChatMessage } from "./LanguageModel.ts";

export interface PromptReading {
  /** The whispered text of the `## Daimonic Intuition` section, without the daimon's name. */
  whisper?: string;
  /** The `## Soul State` section's `- key: value` lines. */
  soulState: Readonly<Record<string, string>>;
  /**
   * The `## Your Notes` section's `- key: value` lines (the soul state's free-text keys, fenced
   * there because they may quote the person): only compared with the history, never followed.
   */
  notes: Readonly<Record<string, string>>;
  /** The name the `## User Model` section records (its `Name:` line). */
  modelName?: string;
  /** "End the monologue with the line [open problem]" when the message is an open-ended problem. */
  openProblemMarker?: string;
  /** "When the task is finished, end the monologue with the line [task complete]." */
  taskCompleteMarker?: string;
  /** The soul state update asks for an empty `currentTask:` line once the task is finished. */
  clearsTask: boolean;
  /** The dialogue is asked for in one or two sentences. */
  shortAnswer: boolean;
  /** The verbs the dialogue is told to use ("Use verbs: pointed out, corrected, insisted."). */
  dialogueVerbs?: string[];
}

const MARKER = String.raw`(\[[^\]\n]{1,40}\])`;
const OPEN_PROBLEM = new RegExp(String.raw`open-ended problem[^\n]*?end the monologue with the line ${MARKER}`, "i");
const TASK_COMPLETE = new RegExp(String.raw`task is finished, end the monologue with the line ${MARKER}`, "i");
const NAME_LINE = /^\s*[-*]?\s*Name:\s*(\p{L}[\p{L}'’-]{0,29}(?: \p{L}[\p{L}'’-]{0,29})?)\s*\.?\s*$/mu;

export function readPrompt(messages: readonly ChatMessage[]): PromptReading {
  // Tool results come from outside too, like user messages.
  const own = messages.filter((m) => m.role === "system" || m.role === "assistant");
  // A section is a message that opens with its heading: the soul quoting one (an echo of the
  // person's words in its history) is not one.
  const last = (heading: string) => own.findLast((m) => m.content.startsWith(heading))?.content;
  const format = last("## Response Format") ?? "";
  const dialogue = section(format, "External Dialogue");
  const reading: PromptReading = {
    soulState: soulStateLines(last("## Soul State") ?? ""),
    notes: soulStateLines(last("## Your Notes") ?? ""),
    clearsTask: /clear it with an empty `currentTask:` line/i.test(format),
    shortAnswer: /\b(?:1-2|one or two) sentences\b/i.test(dialogue),
  };
  const whisper = whisperOf(last("## Daimonic Intuition") ?? "");
  if (whisper) reading.whisper = whisper;
  const modelName = NAME_LINE.exec(last("## User Model") ?? "")?.[1];
  if (modelName) reading.modelName = modelName;
  const open = OPEN_PROBLEM.exec(format)?.[1];
  if (open) reading.openProblemMarker = open;
  const complete = TASK_COMPLETE.exec(format)?.[1];
  if (complete) reading.taskCompleteMarker = complete;
  const verbs = /Use verbs: ([^.\n]+)\./i.exec(dialogue)?.[1];
  if (verbs) reading.dialogueVerbs = verbs.split(",").map((v) => v.trim()).filter(Boolean);
  return reading;
}

/** One `### n. Title` part of the response format, up to the next one. */
function section(format: string, title: string): string {
  const at = format.search(new RegExp(String.raw`^### \d+\. ${title}`, "m"));
  if (at < 0) return "";
  const rest = format.slice(at + 4);
  const next = rest.search(/^### /m);
  return next < 0 ? rest : rest.slice(0, next);
}

function soulStateLines(text: string): Record<string, string> {
  const state: Record<string, string> = {};
  for (const m of text.matchAll(/^- ([A-Za-z]\w*): (.*)$/gm)) state[m[1]!] = m[2]!.trim();
  return state;
}

/** The text after `<Daimon> whispers: ` on the intuition's line (inside its fence). */
function whisperOf(block: string): string | undefined {
  for (const line of block.split("\n")) {
    const whispered = /^[^\n:]{1,64}? whispers: (.+)$/.exec(line)?.[1]?.trim();
    if (whispered) return whispered;
  }
  return undefined;
}

