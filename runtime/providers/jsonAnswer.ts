/**
 * Getting JSON out of a model's text. Models wrap JSON in markdown fences or a sentence of
 * preamble even when told not to (reason-stage: strip markdown from model output), and votes
 * must compare values, not spellings, so equal objects get one canonical form.
 */

/** The inside of a fenced block when the text is (or contains) one; the trimmed text otherwise. */
export function stripMarkdownFences(text: string): string {
  const trimmed = text.trim();
  const whole = /^```[\w-]*[ \t]*\r?\n?([\s\S]*?)\r?\n?```$/.exec(trimmed);
  if (whole) return (whole[1] ?? "").trim();
  const inner = /```[\w-]*[ \t]*\r?\n([\s\S]*?)\r?\n```/.exec(trimmed);
  return inner ? (inner[1] ?? "").trim() : trimmed;
}

export type JsonParse = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * Parses the fenced or bare JSON; failing that, the span from the first `{`/`[` to the last
 * `}`/`]`, which recovers "Here is the answer: {...}".
 */
export function parseJsonAnswer(text: string): JsonParse {
  const candidate = stripMarkdownFences(text);
  try {
    return { ok: true, value: JSON.parse(candidate) };
  } catch (first) {
    const start = candidate.search(/[{[]/);
    const end = Math.max(candidate.lastIndexOf("}"), candidate.lastIndexOf("]"));
    if (start >= 0 && end > start) {
      try {
        return { ok: true, value: JSON.parse(candidate.slice(start, end + 1)) };
      } catch {
        // fall through to the first error, which describes the text as the model sent it
      }
    }
    return { ok: false, error: first instanceof Error ? first.message : String(first) };
  }
}

/** JSON with object keys sorted at every depth, so `{a,b}` and `{b,a}` vote together. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? "undefined";
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}
