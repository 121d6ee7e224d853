/**
 * Scripted answers for a soul that talks to a local wire server (Anthropic or Groq) through
 * the real SDK. Each request is classified by the kind of call that sent it (the single-call
 * pipeline, an ISM choice, a monologue, a dialog, a daimon's divination) from the words of
 * its prompt, and answered from that kind's queue, so a test scripts "the pipeline says X, the
 * ISM chooses Think, the monologue says Y" without caring how the calls interleave. A request
 * with no answer left gets a 400, which fails the turn loudly.
 */
import type { Behaviour, RecordedRequest, ScriptedServer } from "../wire/scriptedServer.ts";

export type WireKind = "pipeline" | "choice" | "monologue" | "dialog" | "divination";

export function wireKindOf(request: Pick<RecordedRequest, "rawBody">): WireKind | undefined {
  const body = request.rawBody;
  if (body.includes("You are deciding what to do next")) return "choice";
  if (body.includes("Please reply with what") && body.includes("whispers")) return "divination";
  if (body.includes("next utterance")) return "dialog";
  if (body.includes("internal monologue thought")) return "monologue";
  if (body.includes("## Response Format")) return "pipeline";
  return undefined;
}

/** The text of a request's prompt, as the SDK sent it (system and messages), for assertions. */
export function promptText(request: RecordedRequest): string {
  const body = request.body ?? {};
  const parts: string[] = [];
  const system = body["system"];
  if (typeof system === "string") parts.push(system);
  const messages = body["messages"];
  if (Array.isArray(messages)) {
    for (const m of messages) {
      const content = (m as { content?: unknown }).content;
      if (typeof content === "string") parts.push(content);
      else if (Array.isArray(content)) for (const block of content) parts.push(String((block as { text?: unknown }).text ?? ""));
    }
  }
  return parts.join("\n\n");
}

/** How many times `needle` occurs in `text`. */
export function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) n++;
  return n;
}

export interface WireScript {
  /** Queues answers for later requests of that kind. */
  script(kind: WireKind, ...answers: string[]): void;
  /** Answers still queued, per kind: a finished test expects none left over. */
  left(): Partial<Record<WireKind, number>>;
  /** The kind of each request so far, in order. */
  kinds(): (WireKind | "unknown")[];
  /** Requests so far. */
  readonly requests: RecordedRequest[];
}

export function wireScript(server: ScriptedServer): WireScript {
  const queues = new Map<WireKind, string[]>();
  const kinds: (WireKind | "unknown")[] = [];
  server.handle((request): Behaviour => {
    const kind = wireKindOf(request);
    kinds.push(kind ?? "unknown");
    const next = kind ? queues.get(kind)?.shift() : undefined;
    if (next === undefined) {
      return { type: "error", status: 400, message: `wire script: no ${kind ?? "unrecognised"} answer left (request ${kinds.length})` };
    }
    return { type: "reply", text: next };
  });
  return {
    script(kind, ...answers) {
      queues.set(kind, [...(queues.get(kind) ?? []), ...answers]);
    },
    left() {
      const out: Partial<Record<WireKind, number>> = {};
      for (const [kind, queue] of queues) if (queue.length) out[kind] = queue.length;
      return out;
    },
    kinds: () => [...kinds],
    requests: server.requests,
  };
}

/** The ISM's answer: which actions to take. */
export const choose = (actions: string[], reasoning = "because"): string => JSON.stringify({ actions, reasoning });
