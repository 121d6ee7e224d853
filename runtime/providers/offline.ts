/**
 * The offline model: the embedded default when no provider key is set.
 *
 * It is deterministic and local (no network, no key) and it follows the requested format, so
 * every format-dependent path (JSON schema steps, tagged single-call pipelines, streaming)
 * runs end to end without a provider. It never pretends to be a real model: what it says
 * states plainly that it is the offline model.
 *
 * Determinism: every choice (enum members, booleans, verbs, phrasing) comes from a hash of
 * the conversation, so the same request always gets the same answer.
 */
import { createCompletionStream, type StreamSink } from "./completionStream.ts";
import { sleep, startDeadline, type RequestDeadline } from "./deadline.ts";
import type {
  ChatMessage,
  Completion,
  CompletionRequest,
  CompletionStream,
  LanguageModel,
  ResponseFormat,
} from "./LanguageModel.ts";
import { pick } from "./offlineChoice.ts";
import { lastFencedBlock, readConversation, type Conversation } from "./offlineConversation.ts";
import { valueFromSchema } from "./offlineSchemaValues.ts";
import { ProviderError } from "./ProviderError.ts";
import { estimateTokens } from "./usage.ts";

export const OFFLINE_PROVIDER = "offline";
export const OFFLINE_DEFAULT_MODEL = "echo";

export interface OfflineModelOptions {
  /** Delay before the answer starts, to exercise timeouts, cancellation and streaming UIs. Default 0. */
  latencyMs?: number;
  /** Model id reported when the request names none. Default `echo`. */
  name?: string;
}

export function createOfflineModel(opts: OfflineModelOptions = {}): LanguageModel {
  const latencyMs = Math.max(0, opts.latencyMs ?? 0);
  const defaultName = opts.name ?? OFFLINE_DEFAULT_MODEL;

  async function produce(request: CompletionRequest, sink?: StreamSink): Promise<Completion> {
    const deadline = startDeadline(request.timeoutMs ?? Number.POSITIVE_INFINITY, [request.signal, sink?.signal]);
    try {
      if (deadline.signal.aborted) throw failure(deadline);
      if (latencyMs > 0) {
        try {
          await sleep(latencyMs, deadline.signal);
        } catch {
          throw failure(deadline);
        }
      }
      const text = composeOfflineAnswer(request.messages, request.format);
      if (sink) {
        for (const chunk of wordChunks(text)) {
          if (deadline.signal.aborted) throw failure(deadline);
          sink.emit(chunk);
          // Let the consumer (and an abort) in between chunks, as a network stream would.
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
      if (deadline.signal.aborted) throw failure(deadline);
      return {
        text,
        usage: {
          inputTokens: estimateTokens(request.messages.map((m) => m.content).join("\n")),
          outputTokens: estimateTokens(text),
        },
        provider: OFFLINE_PROVIDER,
        model: request.model ?? defaultName,
        stopReason: "end_turn",
      };
    } finally {
      deadline.dispose();
    }
  }

  return {
    provider: OFFLINE_PROVIDER,
    complete: (request) => produce(request),
    stream: (request): CompletionStream => createCompletionStream(OFFLINE_PROVIDER, (sink) => produce(request, sink)),
  };
}

function failure(deadline: RequestDeadline): ProviderError {
  if (deadline.cause() === "timeout") {
    return new ProviderError({
      provider: OFFLINE_PROVIDER,
      kind: "timeout",
      message: `no answer within ${deadline.timeoutMs} ms`,
    });
  }
  return new ProviderError({ provider: OFFLINE_PROVIDER, kind: "aborted", message: "request aborted" });
}

/** Splits text into word chunks whose concatenation is exactly the text. */
export function wordChunks(text: string): string[] {
  if (text.length === 0) return [];
  return text.match(/\s*\S+\s*/g) ?? [text];
}

// ---------------------------------------------------------------------------------------------
// Answers

/**
 * The offline model's whole answer for a conversation in a format. Exported so other
 * offline fakes (and tests) can reuse exactly what the model would say.
 */
export function composeOfflineAnswer(messages: readonly ChatMessage[], format?: ResponseFormat): string {
  const convo = readConversation(messages);
  switch (format?.type) {
    case "json":
      return JSON.stringify(valueFromSchema(format.schema, format.schema, convo, "$", 0));
    case "tags":
      return tagsAnswer(format.tags, convo);
    default:
      return textAnswer(convo);
  }
}

const MONOLOGUE_VERBS = ["thought", "mused", "pondered", "wondered", "considered", "reflected", "noticed", "weighed"];
const DIALOGUE_VERBS = ["said", "explained", "offered", "noted", "observed", "replied", "remarked"];

function dialogueLine(c: Conversation): string {
  if (!c.said) {
    return "Hello! I'm the offline model, running without a language model, so my answers are simple echoes.";
  }
  if (c.userTurns <= 1) {
    return `Hello${c.speaker ? `, ${c.speaker}` : ""}! You said "${c.said}". I'm running on the offline model: no language model is connected, so I can keep you company and remember what you tell me, but not really think.`;
  }
  const variants = [
    `You said "${c.said}". I'm the offline model, with no language model behind me, so I can only echo that back.`,
    `(offline model) I heard "${c.said}", but without a language model connected I can't say much more.`,
    `I'm the offline model, so I can't really think about "${c.said}", but I did hear it.`,
  ];
  const recall = c.earlier && c.earlier !== c.said ? ` Earlier you told me "${c.earlier}".` : "";
  return `${pick(variants, c.seed, "dialogue")}${recall}`;
}

function thoughtLine(c: Conversation): string {
  const who = c.speaker ?? "The user";
  if (!c.said) return "Nothing has been said yet; as the offline model I can only wait and answer plainly.";
  return `${who} said "${c.said}". I'm running as the offline model, so I'll just answer plainly.`;
}

/**
 * A daimon's intuition: short, oblique, about what the person said (never an echo of the
 * soul's own words). The soul is named in the command ("the daimon of Claudius").
 */
function intuitionLine(c: Conversation): string {
  const soul = /daimon of ([^,.\n]+)/.exec(c.command)?.[1]?.trim();
  const transcript = lastFencedBlock(c.lastUserRaw) ?? c.lastUserRaw;
  const lines = transcript.split("\n").map((l) => l.trim()).filter(Boolean);
  const spoken = lines.filter((l) => !soul || !l.startsWith(`${soul}:`));
  const last = (spoken.at(-1) ?? c.said).replace(/^[^:"]{1,40}: /, "");
  const topic = last.split(/\s+/).slice(0, 6).join(" ").replace(/[.!?,;:]+$/, "");
  if (!topic) return "Nothing has surfaced yet; wait. (offline intuition)";
  const variants = [
    `They return to "${topic}"; there is more under it than they have said.`,
    `Beneath "${topic}" lies a question they have not asked yet.`,
    `Listen for what "${topic}" is guarding.`,
  ];
  // The offline model says plainly what it is, in whispers too.
  return `${pick(variants, c.seed, "intuition")} (offline intuition)`;
}

function summaryLine(c: Conversation): string {
  const who = c.soulName ?? "The soul";
  if (!c.said) return `${who} has learned nothing yet: the conversation is empty (offline model summary).`;
  return `${who} has learned so far that ${c.speaker ?? "the user"} said "${c.said}" (offline model summary).`;
}

/**
 * Plain text. When the instruction asks for Open Souls' `Name verb: "..."` format, the
 * offline model follows it, as a real model would, so the steps' stripping is exercised.
 */
function textAnswer(c: Conversation): string {
  const format = /Use the format:\s*'?([^\n'"]{1,80}?):\s*"\.\.\."/.exec(c.command);
  const verb = format?.[1].trim().split(/\s+/).at(-1)?.toLowerCase() ?? "";
  const wantsSummary = /\bsummar(?:y|ize|ise)/i.test(c.command) || verb === "summarized";
  // "Do not include internal thoughts" appears in dialogue instructions too, so only a request
  // *for* a monologue (or a monologue verb in the format) counts.
  const wantsThought =
    /next internal monologue|internal monologue thought/i.test(c.command) ||
    MONOLOGUE_VERBS.includes(verb) ||
    verb === "thinks" ||
    verb === "feels";
  const body =
    verb === "whispers" ? intuitionLine(c) : wantsSummary ? summaryLine(c) : wantsThought ? thoughtLine(c) : dialogueLine(c);
  return format ? `${format[1].trim()}: "${body}"` : body;
}

function tagsAnswer(tags: readonly string[], c: Conversation): string {
  const wanted = new Set(tags);
  const parts = tags.map((tag) => {
    switch (tag) {
      case "internal_monologue":
        return `<internal_monologue verb="${pick(MONOLOGUE_VERBS, c.seed, tag)}">\n${thoughtLine(c)}\n</internal_monologue>`;
      case "external_dialogue":
        return `<external_dialogue verb="${pick(DIALOGUE_VERBS, c.seed, tag)}">\n${dialogueLine(c)}\n</external_dialogue>`;
      // A check is true exactly when its update was requested too, so both halves of the gate run offline.
      case "user_model_check":
        return `<user_model_check>${wanted.has("user_model_update")}</user_model_check>`;
      case "soul_state_check":
        return `<soul_state_check>${wanted.has("soul_state_update")}</soul_state_check>`;
      case "user_model_update":
        return `<user_model_update>\n${userModel(c)}\n</user_model_update>`;
      case "model_change_note":
        return `<model_change_note>Noted what ${c.speaker ?? "the user"} said most recently (offline model).</model_change_note>`;
      case "soul_state_update":
        return `<soul_state_update>\n${soulState(c)}\n</soul_state_update>`;
      default:
        return `<${tag}>(offline model) ${tag.replace(/_/g, " ")}${c.said ? ` for "${c.said}"` : ""}</${tag}>`;
    }
  });
  return parts.join("\n");
}

function userModel(c: Conversation): string {
  const who = c.speaker ?? "User";
  const said = c.said ? `"${c.said}"` : "nothing yet";
  return [
    `# ${who}`,
    "",
    "## Persona",
    `Someone talking with the soul while it runs on the offline model.`,
    "",
    "## Speaking Style",
    "Not enough conversation yet to tell.",
    "",
    "## Conversational Context",
    `Most recently said ${said}.`,
    "",
    "## Worldview",
    "Unknown so far.",
    "",
    "## Interests & Domains",
    c.said ? `Whatever ${said} is about.` : "Unknown so far.",
    "",
    "## Working Patterns",
    "Unknown so far.",
    "",
    "## Most Potent Memories",
    `Their last message: ${said}.`,
  ].join("\n");
}

function soulState(c: Conversation): string {
  const topic = c.said ? c.said.split(" ").slice(0, 6).join(" ") : "none";
  return [`emotionalState: neutral`, `currentTopic: ${topic}`].join("\n");
}
