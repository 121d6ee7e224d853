/**
 * Getting JSON out of a model's text. Models wrap JSON in markdown fences or a sentence of
 * preamble even when told not to (reason-stage: strip markdown from model output), and votes
 * must compare values, not spellings, so equal objects get one canonical form.
 */

const FENCED = /```[a-zA-Z0-9_-]*[ \t]*\r?\n?([\s\S]*?)\r?\n?```/;

/** The inside of the first fenced block when the text contains one; the text without stray fence marks otherwise. */
export function stripMarkdownFences(text: string): string {
  const match = FENCED.exec(text);
  if (match) return match[1].trim();
  return text.replace(/```[a-zA-Z0-9_-]*/g, "").trim();
}

/**
 * The first balanced JSON object or array in free text, so "Here is the answer: {...} Hope
 * that helps {:)}" still yields the object; braces inside strings do not count.
 */
export function extractJson(text: string): string | undefined {
  const cleaned = stripMarkdownFences(text);
  const start = cleaned.search(/[[{]/);
  if (start < 0) return undefined;
  const open = cleaned[start];
  const close = open === "{" ? "}" : "]";
  let depth = 0;
  let inString = false;
  for (let i = start; i < cleaned.length; i++) {
    const c = cleaned[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return cleaned.slice(start, i + 1);
  }
  return undefined;
}

export type JsonParse = { ok: true; value: unknown } | { ok: false; error: string };

/** Parses the JSON a model answered with (fenced, bare, or inside prose). */
export function parseJsonText(text: string): JsonParse {
  const json = extractJson(text);
  if (json === undefined) return { ok: false, error: "the answer contained no JSON object" };
  try {
    return { ok: true, value: JSON.parse(json) };
  } catch (e) {
    return { ok: false, error: `the JSON did not parse: ${(e as Error).message}` };
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
