/**
 * The offline model's native tool use, so a soul's tool loop (the `toolUse` step) runs
 * without a key, in the demo and in tests. The rules are deterministic:
 *
 * 1. Nothing is called when the request offers no tools or `toolChoice` is `none`.
 * 2. After tool results (the prompt ends with `tool` messages) it answers in text that
 *    quotes each result, or says the call was refused: it never calls again, so the loop
 *    ends after one round.
 * 3. Otherwise it calls the tool `toolChoice` names; else the first offered tool whose name
 *    the last user message (then the step's instruction) mentions, as written or with `_`/`-`
 *    read as spaces (`get_time` matches "get time"); else, under `required`, the first tool.
 *    No tool named and no call required: no call, and the ordinary text answer.
 *
 * The call's input is the schema's values (offlineSchemaValues.ts), except that top-level
 * string fields that carry the person's words (`query`, `text`, `question`, ...) get the
 * last user message. The call id is a hash of the conversation and the tool name.
 */
import { fnv1a } from "./offlineChoice.ts";
import { lastFencedBlock, type Conversation } from "./offlineConversation.ts";
import { valueFromSchema } from "./offlineSchemaValues.ts";
import type { ChatMessage, CompletionRequest, ToolCall, ToolDefinition } from "./LanguageModel.ts";

export interface OfflineToolAnswer {
  text: string;
  toolCalls?: ToolCall[];
}

/** Fields that take the person's own words rather than a made-up value. */
const WORDS_FIELDS = new Set(["query", "q", "text", "question", "search", "message", "input", "prompt", "content", "topic"]);

const RESULT_MAX = 200;

/** The tool answer, or undefined when the offline model answers as it would without tools. */
export function offlineToolAnswer(request: CompletionRequest, convo: Conversation): OfflineToolAnswer | undefined {
  const tools = request.tools ?? [];
  if (tools.length === 0 || request.toolChoice === "none") return undefined;
  const results = trailingResults(request.messages);
  if (results.length > 0) return { text: resultsText(results, request.messages) };
  const tool = chosenTool(tools, request, convo);
  if (!tool) return undefined;
  const call: ToolCall = {
    id: `offline_${fnv1a(`${convo.seed}:${tool.name}`).toString(16).padStart(8, "0")}`,
    name: tool.name,
    input: inputFor(tool, convo),
  };
  return { text: "", toolCalls: [call] };
}

function trailingResults(messages: readonly ChatMessage[]): ChatMessage[] {
  let i = messages.length;
  while (i > 0 && messages[i - 1]!.role === "tool") i--;
  return messages.slice(i);
}

function mentions(text: string, name: string): boolean {
  const lower = text.toLowerCase();
  const spaced = name.toLowerCase().replace(/[_-]+/g, " ");
  const word = (w: string) => new RegExp(`(^|[^a-z0-9_-])${w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[^a-z0-9_-])`).test(lower);
  return word(name.toLowerCase()) || (spaced !== name.toLowerCase() && word(spaced));
}

function chosenTool(tools: readonly ToolDefinition[], request: CompletionRequest, convo: Conversation): ToolDefinition | undefined {
  const choice = request.toolChoice;
  if (typeof choice === "object") return tools.find((t) => t.name === choice.name);
  // The person's words first: the instruction may list every tool, the message names the one wanted.
  const said = lastFencedBlock(convo.lastUserRaw) ?? convo.lastUserRaw;
  const named = tools.find((t) => mentions(said, t.name)) ?? tools.find((t) => mentions(convo.command, t.name));
  return named ?? (choice === "required" ? tools[0] : undefined);
}

function inputFor(tool: ToolDefinition, convo: Conversation): unknown {
  const value = valueFromSchema(tool.inputSchema, tool.inputSchema, convo, `$${tool.name}`, 0);
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const properties = (tool.inputSchema.properties ?? {}) as Record<string, { type?: unknown }>;
  for (const key of Object.keys(value)) {
    if (WORDS_FIELDS.has(key.toLowerCase()) && properties[key]?.type === "string" && convo.said) value[key] = convo.said;
  }
  return value;
}

/** The name of the tool a result answers, from the assistant message that made the call. */
function toolNameOf(result: ChatMessage, messages: readonly ChatMessage[]): string {
  for (const m of messages) {
    const call = m.toolCalls?.find((c) => c.id === result.toolCallId);
    if (call) return call.name;
  }
  return "tool";
}

function resultsText(results: readonly ChatMessage[], messages: readonly ChatMessage[]): string {
  const parts = results.map((r) => {
    // Results reach a prompt fenced as outside text; the offline model reads what is inside.
    const inner = (lastFencedBlock(r.content) ?? r.content).replace(/\s+/g, " ").trim();
    const shown = inner.length > RESULT_MAX ? `${inner.slice(0, RESULT_MAX - 1)}…` : inner;
    const name = toolNameOf(r, messages);
    return r.isError ? `I could not use ${name}: ${shown}` : `${name} says: ${shown}`;
  });
  return `(offline model) ${parts.join(" ")}`;
}
