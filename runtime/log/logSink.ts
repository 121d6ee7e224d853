/**
 * Where pino's lines go: every string in them redacted (a NATS URL with a password, a key
 * echoed in a provider's error), then written as JSON lines, or as readable lines for a person
 * at a terminal. pino hands each record over already serialised; reading it back costs a
 * parse per line, which a log (never on a turn's hot path below `debug`) can afford, and it
 * means no field, error message or stack escapes the redaction.
 */
import { redactSecrets } from "./secrets.ts";
import { readableLine } from "./readableLine.ts";

/** A stream-like target: process.stderr, or anything a test collects lines in. */
export interface LogTarget {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export type LogFormat = "json" | "readable";

export function logSink(target: LogTarget, format: LogFormat): { write(line: string): void } {
  return {
    write(line: string) {
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        // Not a record pino made: written as it is, but never with a credential in it.
        target.write(redactSecrets(line));
        return;
      }
      const clean = redactDeep(record) as Record<string, unknown>;
      target.write(format === "json" ? `${JSON.stringify(clean)}\n` : readableLine(clean));
    },
  };
}

function redactDeep(value: unknown): unknown {
  if (typeof value === "string") return redactSecrets(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)]));
  }
  return value;
}
