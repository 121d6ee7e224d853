/**
 * Where outside text sits in a request: the fences `fenceUntrusted` writes (a label, the
 * untrusted notice, a backtick fence), and what is left of the request around them. A test
 * that plants words in outside text checks they appear inside a fence and nowhere else.
 */
import { UNTRUSTED_NOTICE } from "../../../runtime/cognition/index.ts";
import type { CompletionRequest } from "../../../runtime/providers/index.ts";

export interface UntrustedFence {
  label: string;
  body: string;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
// The closing fence is the opening one again, not followed by another backtick.
const FENCE = new RegExp(`([^\\n]*) \\(${escape(UNTRUSTED_NOTICE)}\\):\\n\\n(\`{3,})\\n([\\s\\S]*?)\\n\\2(?!\`)`, "g");

/** The request's untrusted fences, and its text (every message, joined) with them cut out. */
export function untrustedFences(request: CompletionRequest): { fences: UntrustedFence[]; outside: string } {
  const text = request.messages.map((m) => m.content).join("\n\n");
  const fences = [...text.matchAll(FENCE)].map((m) => ({ label: m[1], body: m[3] }));
  return { fences, outside: text.replace(FENCE, "") };
}
