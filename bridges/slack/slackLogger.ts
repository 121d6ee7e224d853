/**
 * The logger the Slack SDKs (Bolt, its Socket Mode client, WebClient) write to: warnings and
 * errors go to the node's log under the bridge's name, debug and info are dropped (Socket Mode
 * logs every frame at debug, tokens and user text included). Every line is scrubbed of the
 * bridge's secrets first, so no SDK message can print a token.
 */
import { LogLevel, type Logger } from "@slack/bolt";

function text(parts: unknown[]): string {
  return parts.map((p) => (p instanceof Error ? p.message : typeof p === "string" ? p : safeJson(p))).join(" ");
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Replaces each secret (and its first 12 characters, in case a line cut it short) with `[redacted]`. */
export function redact(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const secret of secrets) {
    if (secret.length < 8) continue;
    out = out.split(secret).join("[redacted]").split(secret.slice(0, 12)).join("[redacted]");
  }
  return out;
}

export function slackLogger(log: (line: string) => void, prefix: string, secrets: readonly string[]): Logger {
  const write = (level: string, parts: unknown[]) => log(redact(`${prefix}: slack ${level}: ${text(parts)}`, secrets));
  return {
    debug() {},
    info() {},
    warn: (...parts: unknown[]) => write("warning", parts),
    error: (...parts: unknown[]) => write("error", parts),
    setLevel() {},
    getLevel: () => LogLevel.WARN,
    setName() {},
  };
}
