/**
 * How a log record reads on a terminal: the line ensoul always printed there
 * (`[ensoul local] bridge http-sam not started: ...`), then the record's context as
 * `key=value` (`soul=sam trace=sam:3`), so a person sees which soul and which turn a line is
 * about without reading JSON. Pipes and files get the JSON itself (logSink.ts).
 */

/** Fields every record has, or that the line shows in its own place. */
const SHOWN_ELSEWHERE = new Set(["level", "time", "pid", "hostname", "msg", "node", "component", "err"]);

/** Only these levels are named: info, warn and error lines keep the text they always had. */
const NAMED_LEVELS = new Set(["fatal", "debug", "trace"]);

export function readableLine(record: Readonly<Record<string, unknown>>): string {
  const where = typeof record.node === "string" ? record.node : typeof record.component === "string" ? record.component : undefined;
  const level = typeof record.level === "string" && NAMED_LEVELS.has(record.level) ? `${record.level}: ` : "";
  let msg = typeof record.msg === "string" ? record.msg : "";
  const err = record.err as { message?: unknown } | undefined;
  if (err && typeof err.message === "string" && !msg.includes(err.message)) msg = msg ? `${msg}: ${err.message}` : err.message;
  const fields = Object.entries(record)
    .filter(([key, value]) => !SHOWN_ELSEWHERE.has(key) && value !== undefined)
    .map(([key, value]) => ` ${key}=${fieldValue(value)}`)
    .join("");
  return `[ensoul${where !== undefined ? ` ${where}` : ""}] ${level}${msg}${fields}\n`;
}

/** Bare when it reads unambiguously (`sam:3`, `12`), quoted JSON otherwise. */
function fieldValue(value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "string" && /^[^\s"=]+$/.test(value)) return value;
  return JSON.stringify(value) ?? String(value);
}
