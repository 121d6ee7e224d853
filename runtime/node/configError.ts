/**
 * A config mistake as one line naming the file and the field (`cluster.yaml:
 * souls[1].blueprint: unknown soul 'x'`), and the translation of zod's issues into that line.
 *
 * It exists on its own because both the whole config and the gate sections (which parse each
 * gate with its own schema) report their issues this way.
 */
import type { z } from "zod";
import { formatPath } from "../store/index.ts";

export { formatPath };

/** A config that does not validate; the message is one line: `<file>: <field>: <problem>`. */
export class ConfigError extends Error {
  readonly file: string;
  readonly field: string;
  /** Lines below the message, when it has more to show (a module's syntax error, as esbuild reports it). */
  readonly detail: string | undefined;
  constructor(file: string, field: string, problem: string, detail?: string) {
    super(field ? `${file}: ${field}: ${problem}` : `${file}: ${problem}`);
    this.name = "ConfigError";
    this.file = file;
    this.field = field;
    this.detail = detail;
  }
}

export function issuePath(issue: z.core.$ZodIssue): PropertyKey[] {
  // An unknown key is reported on its parent; the key itself is the field to name.
  if (issue.code === "unrecognized_keys" && issue.keys.length > 0) return [...issue.path, issue.keys[0]];
  return [...issue.path];
}

export function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") return issue.keys.length > 1 ? `unknown fields ${issue.keys.join(", ")}` : "unknown field";
  if (issue.code === "invalid_type" && /received undefined/.test(issue.message)) return "required";
  return issue.message.replace(/^Invalid input: /, "");
}
