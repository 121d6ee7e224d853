import type { Proposal } from "../vocabulary/index.ts";
import { hold, intercept, type Gate, type GateContext } from "./Gate.ts";
import { createSecretScanner, type SecretPattern } from "./secrets.ts";

export interface BouncerOptions {
  name?: string;
  /** Default 100: security blocks run before anything else looks at the proposal. */
  priority?: number;
  /** Values that must never leave (API keys the node holds, ...): `{ NAME: value }` or a list. */
  vault?: Readonly<Record<string, string>> | readonly string[];
  /** Extra secret shapes, on top of the built-in ones. */
  patterns?: readonly SecretPattern[];
  /** Dispatch actions that touch the machine and so need an allowlist (default `tool`, `shell`). */
  guardedActions?: readonly string[];
  /** Tool names (for shell: command names) that may run without a human's approval. */
  allowlist?: readonly string[];
  trigger?: (ctx: GateContext, proposal: Proposal) => boolean;
}

/**
 * The bouncer: nothing that looks like a credential leaves the soul, in speech, logs or a
 * dispatched action, and a tool or shell action not on the allowlist is held for a human.
 */
export function bouncer(options: BouncerOptions = {}): Gate {
  const scanner = createSecretScanner({ ...(options.vault ? { vault: options.vault } : {}), ...(options.patterns ? { patterns: options.patterns } : {}) });
  const guarded = new Set(options.guardedActions ?? ["tool", "shell"]);
  const allowed = new Set(options.allowlist ?? []);
  const name = options.name ?? "bouncer";
  return {
    name,
    priority: options.priority ?? 100,
    ...(options.trigger ? { trigger: options.trigger } : {}),
    verify(proposal, ctx) {
      const findings = scanner.scan(outgoingText(proposal));
      if (findings.length > 0) {
        return intercept(`outgoing ${proposal.kind} contains ${findings.map((f) => f.label).join(", ")}; blocked`);
      }
      if (proposal.kind === "dispatch" && proposal.action !== undefined && guarded.has(proposal.action)) {
        const target = actionTarget(proposal);
        const chained = proposal.action === "shell" && chainsCommands(proposal);
        if (target !== undefined && allowed.has(target) && !chained) return proposal;
        // Approved by a human once: this proposal (and only this one) goes through.
        if (ctx.approvedProposalId === proposal.id) return proposal;
        if (target !== undefined && allowed.has(target)) return hold(`shell "${target}" chains other commands: held for human approval`);
        const what = target === undefined ? `an unnamed ${proposal.action} action` : `${proposal.action} "${target}"`;
        return hold(`${what} is not on the allowlist: held for human approval`);
      }
      return proposal;
    },
  };
}

/**
 * The tool or command a guarded action would run: `data.tool` or `data.name` for a tool,
 * `data.command` or the first word of the content for a shell.
 */
export function actionTarget(proposal: Proposal): string | undefined {
  const data = proposal.data ?? {};
  for (const key of ["tool", "name", "command"] as const) {
    const value = data[key];
    if (typeof value === "string" && value.trim()) return firstWord(value);
  }
  return proposal.content.trim() ? firstWord(proposal.content) : undefined;
}

/** `ls && rm -rf ~` starts with an allowlisted word; any shell operator means a human looks at it. */
function chainsCommands(proposal: Proposal): boolean {
  const command = typeof proposal.data?.command === "string" ? proposal.data.command : proposal.content;
  return /[;&|`$<>()\n\\]/.test(command);
}

function firstWord(text: string): string {
  return text.trim().split(/\s+/, 1)[0];
}

/** Everything of a proposal that leaves the soul: content, action name and the strings inside data. */
function outgoingText(proposal: Proposal): string {
  const parts = [proposal.content];
  if (proposal.action !== undefined) parts.push(proposal.action);
  collectStrings(proposal.data, parts, 0);
  return parts.join("\n");
}

function collectStrings(value: unknown, out: string[], depth: number): void {
  if (depth > 32) return;
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out, depth + 1);
  else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      // `key: value`, so `{ password: "..." }` reads like the assignment it is.
      if (typeof v === "string") out.push(`${k}: ${v}`);
      else {
        out.push(k);
        collectStrings(v, out, depth + 1);
      }
    }
  }
}
