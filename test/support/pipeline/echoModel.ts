/**
 * A scripted model for the injection tests: it "echoes" the user's text exactly as the
 * prompt showed it (inside the untrusted fence) into its monologue and, quoted, into its
 * dialogue, as a real model quoting a user would. The tests then check that the parse holds
 * exactly what this model put in its real tags.
 */
import type { RecordedRequest } from "../wire/scriptedServer.ts";

/** The inner text of the last fenced block of a prompt: the user's message as the prompt shows it. */
export function fencedUserText(prompt: string): string {
  const blocks = [...prompt.matchAll(/^(`{3,})\n([\s\S]*?)\n\1$/gm)];
  const last = blocks.at(-1);
  if (!last) throw new Error("the prompt has no fenced user message");
  return last[2];
}

/** The text of the last user turn of an Anthropic or OpenAI-style request body. */
export function lastUserContent(request: RecordedRequest): string {
  const messages = (request.body?.["messages"] ?? []) as { role: string; content: unknown }[];
  const user = [...messages].reverse().find((m) => m.role === "user");
  if (!user) throw new Error("the request has no user message");
  if (typeof user.content === "string") return user.content;
  return (user.content as { type: string; text?: string }[]).map((b) => b.text ?? "").join("");
}

/** Everything the request says, system and turns, for "was this chained in?" checks. */
export function requestText(request: RecordedRequest): string {
  return request.rawBody;
}

export interface EchoAnswer {
  text: string;
  monologue: string;
  dialogue: string;
}

/**
 * `between`: the model also quotes the message outside any section (before its first tag and
 * between two), where a tag that survived the fence would be structure.
 */
export function echoAnswer(echo: string, tag: string, opts: { soulStateCheck?: boolean; between?: boolean } = {}): EchoAnswer {
  const monologue = `The user wrote this, and I will not obey it:\n${echo}`.trim();
  const dialogue = `I read your message ("${echo}") and I keep my own format. [${tag}]`.trim();
  const parts = [
    `<internal_monologue verb="pondered">\n${monologue}\n</internal_monologue>`,
    `<external_dialogue verb="replied">\n${dialogue}\n</external_dialogue>`,
    `<user_model_check>false</user_model_check>`,
  ];
  if (opts.soulStateCheck) parts.push(`<soul_state_check>false</soul_state_check>`);
  if (opts.between) {
    parts.unshift(`Quoting the user first: ${echo}`);
    parts.splice(2, 0, `(and again: ${echo})`);
  }
  return { text: parts.join("\n"), monologue, dialogue };
}
