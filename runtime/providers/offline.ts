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
// What the offline model reads from a conversation

interface Conversation {
  /** Hash of the whole conversation: the root of every deterministic choice. */
  seed: number;
  /** The step's instruction: the final message when it is a system message. */
  command: string;
  soulName?: string;
  /** Who spoke last: the user message's name, an Open Souls `Name said: "..."` speaker, or undefined. */
  speaker?: string;
  /** What the last user message said, cleaned and shortened. Empty when there is none. */
  said: string;
  /** Something the user said before the last message, so replies show the memory at work. */
  earlier?: string;
  /** How many user messages the conversation holds. */
  userTurns: number;
  /** The last user message as written (line breaks kept): a daimon's transcript is one message. */
  lastUserRaw: string;
}

const SNIPPET_MAX = 100;

function readConversation(messages: readonly ChatMessage[]): Conversation {
  const seed = fnv1a(messages.map((m) => `${m.role}\u0000${m.name ?? ""}\u0000${m.content}`).join("\u0001"));
  const last = messages.at(-1);
  const command = last?.role === "system" ? last.content : "";
  const soulName =
    (last?.role === "system" ? last.name : undefined) ??
    /Model the (?:mind|psyche) of ([^.\n]+)\./.exec(command)?.[1]?.trim() ??
    undefined;

  const users = messages.filter((m) => m.role === "user");
  const lastUser = users.at(-1);
  let said = "";
  let speaker = lastUser?.name;
  if (lastUser) {
    const read = userText(lastUser.content);
    speaker ??= read.speaker;
    said = snippet(read.text);
  }
  // The longest earlier message is usually the one with something worth remembering.
  const earlierTexts = users.slice(0, -1).map((m) => snippet(userText(m.content).text));
  const earlier = earlierTexts.reduce<string | undefined>((best, t) => (t.length > (best?.length ?? 0) ? t : best), undefined);
  return { seed, command, soulName, speaker, said, earlier, userTurns: users.length, lastUserRaw: lastUser?.content ?? "" };
}

/**
 * A user message's text: inside the prompt's fence, without Open Souls' `Name said: "..."`
 * frame or the pipeline's `Name: text` line (only inside a fence, where the pipeline puts it,
 * so a user's own "Note: ..." is left alone).
 */
function userText(content: string): { text: string; speaker?: string } {
  const fenced = lastFencedBlock(content);
  const text = fenced ?? content;
  const perception = /^\s*([^\n:"]{1,60}?) [a-z][\w ]{0,30}: "([\s\S]*)"\s*$/.exec(text);
  if (perception) return { text: perception[2], speaker: perception[1] };
  const line = fenced === undefined ? null : /^([^\n:"]{1,40}): ([\s\S]*)$/.exec(text);
  return line ? { text: line[2], speaker: line[1] } : { text };
}

/** The inner text of the last fenced block: where prompts put the (untrusted) user message. */
function lastFencedBlock(text: string): string | undefined {
  const fences = [...text.matchAll(/^(`{3,}|~{3,})[^\n]*\n([\s\S]*?)\n\1[ \t]*$/gm)];
  return fences.at(-1)?.[2];
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > SNIPPET_MAX ? `${flat.slice(0, SNIPPET_MAX - 1).trimEnd()}…` : flat;
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

function pick<T>(items: readonly T[], seed: number, salt: string): T {
  return items[fnv1a(`${seed}:${salt}`) % items.length];
}

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

// ---------------------------------------------------------------------------------------------
// JSON from a JSON schema

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;

const MAX_DEPTH = 8;

function asSchema(value: unknown): Schema | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Schema) : undefined;
}

function resolveRef(ref: string, root: Schema): Schema | undefined {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    node = asSchema(node)?.[key];
  }
  return asSchema(node);
}

function schemaType(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return (t.find((x) => x !== "null") as string | undefined) ?? "null";
  if (schema.properties) return "object";
  if (schema.items || schema.prefixItems) return "array";
  return undefined;
}

function valueFromSchema(schemaIn: unknown, root: Schema, c: Conversation, path: string, depth: number): Json {
  let schema = asSchema(schemaIn) ?? {};
  for (let hops = 0; typeof schema.$ref === "string" && hops < 16; hops++) {
    schema = resolveRef(schema.$ref, root) ?? {};
  }
  if ("const" in schema) return schema.const as Json;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return pick(schema.enum as Json[], c.seed, path);
  }
  const options = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(options) && options.length > 0) {
    const nonNull = options.filter((o) => asSchema(o)?.type !== "null");
    return valueFromSchema(nonNull[0] ?? options[0], root, c, path, depth + 1);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const merged: Schema = {};
    for (const part of schema.allOf) Object.assign(merged, asSchema(part));
    return valueFromSchema(merged, root, c, path, depth + 1);
  }
  switch (schemaType(schema)) {
    case "object":
      return objectFromSchema(schema, root, c, path, depth);
    case "array":
      return arrayFromSchema(schema, root, c, path, depth);
    case "string":
      return stringFromSchema(schema, c, path);
    case "integer":
    case "number":
      return numberFromSchema(schema, c, path, schemaType(schema) === "integer");
    case "boolean":
      return fnv1a(`${c.seed}:${path}`) % 2 === 0;
    case "null":
      return null;
    default:
      return stringFromSchema(schema, c, path);
  }
}

function objectFromSchema(schema: Schema, root: Schema, c: Conversation, path: string, depth: number): Json {
  const out: { [key: string]: Json } = {};
  const properties = asSchema(schema.properties) ?? {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  for (const [key, sub] of Object.entries(properties)) {
    // Past the depth bound only required properties are filled, so recursive schemas end.
    if (depth >= MAX_DEPTH && !required.has(key)) continue;
    out[key] = valueFromSchema(sub, root, c, `${path}.${key}`, depth + 1);
  }
  return out;
}

function arrayFromSchema(schema: Schema, root: Schema, c: Conversation, path: string, depth: number): Json {
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
  const min = typeof schema.minItems === "number" ? schema.minItems : 0;
  const max = typeof schema.maxItems === "number" ? schema.maxItems : Number.POSITIVE_INFINITY;
  const wanted = depth >= MAX_DEPTH ? min : 1 + (fnv1a(`${c.seed}:${path}#n`) % 3);
  const count = Math.max(prefix.length, Math.min(Math.max(wanted, min), max));
  const out: Json[] = [];
  for (let i = 0; i < count; i++) {
    const itemSchema = i < prefix.length ? prefix[i] : schema.items === false ? undefined : schema.items;
    if (itemSchema === undefined && i >= prefix.length) break;
    out.push(valueFromSchema(itemSchema, root, c, `${path}[${i}]`, depth + 1));
  }
  return out;
}

function humanKey(path: string): string {
  const key = /([A-Za-z_][\w]*)(?:\[\d+\])*$/.exec(path)?.[1] ?? "answer";
  return key
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/_/g, " ")
    .toLowerCase();
}

function stringFromSchema(schema: Schema, c: Conversation, path: string): string {
  switch (schema.format) {
    case "date-time":
      return new Date(Date.UTC(2024, 0, 1) + (c.seed % 86_400) * 1000).toISOString();
    case "date":
      return "2024-01-01";
    case "email":
      return "offline@example.com";
    case "uri":
    case "url":
      return "https://example.com/offline";
    case "uuid": {
      const h = [0, 1, 2, 3].map((i) => fnv1a(`${c.seed}:${path}:${i}`).toString(16).padStart(8, "0")).join("");
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
    }
  }
  const index = /\[(\d+)\]$/.exec(path)?.[1];
  // An item of `newIdeas` is an "idea".
  const label = index !== undefined ? humanKey(path).replace(/s$/, "") : humanKey(path);
  const numbered = index !== undefined ? ` ${Number(index) + 1}` : "";
  let text = c.said ? `offline ${label}${numbered} about "${c.said}"` : `offline ${label}${numbered}`;
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Number.POSITIVE_INFINITY;
  if (text.length > max) text = text.slice(0, max);
  while (text.length < min) text += " (offline)".slice(0, min - text.length);
  return text;
}

function numberFromSchema(schema: Schema, c: Conversation, path: string, integer: boolean): number {
  const step = integer ? 1 : 0.5;
  let lo = typeof schema.minimum === "number" ? schema.minimum : undefined;
  let hi = typeof schema.maximum === "number" ? schema.maximum : undefined;
  if (typeof schema.exclusiveMinimum === "number") lo = schema.exclusiveMinimum + step;
  if (typeof schema.exclusiveMaximum === "number") hi = schema.exclusiveMaximum - step;
  if (integer) {
    if (lo !== undefined) lo = Math.ceil(lo);
    if (hi !== undefined) hi = Math.floor(hi);
  }
  lo ??= hi !== undefined ? Math.min(0, hi) : 0;
  hi ??= lo + 10;
  if (hi < lo) return lo;
  const span = integer ? hi - lo + 1 : hi - lo;
  const r = fnv1a(`${c.seed}:${path}`);
  return integer ? lo + (r % Math.max(1, span)) : lo + ((r % 1000) / 1000) * span;
}

/** FNV-1a, 32 bit: small, stable across platforms, good enough to spread choices. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
