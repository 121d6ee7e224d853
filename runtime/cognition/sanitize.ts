import { z } from "zod";

/**
 * Models often wrap structured answers in markdown fences or add a sentence around them.
 * These helpers recover the structure, or say exactly why they could not.
 */

const FENCED = /```[a-zA-Z0-9_-]*[ \t]*\r?\n?([\s\S]*?)\r?\n?```/;

/** Removes a markdown code fence around the answer (the first fenced block wins). */
export function stripMarkdownFences(text: string): string {
  const match = FENCED.exec(text);
  if (match) return match[1].trim();
  return text.replace(/```[a-zA-Z0-9_-]*/g, "").trim();
}

/** Finds the first balanced JSON object or array in free text. */
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

export type JsonAnswer<T> = { ok: true; value: T } | { ok: false; error: string };

/** Parses a model's answer against a schema; the error text is fit to feed back to the model. */
export function parseJsonAnswer<T>(text: string, schema: z.ZodType<T>): JsonAnswer<T> {
  const json = extractJson(text);
  if (json === undefined) return { ok: false, error: "the answer contained no JSON object" };
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (e) {
    return { ok: false, error: `the JSON did not parse: ${(e as Error).message}` };
  }
  const result = schema.safeParse(data);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: `the JSON did not match the schema: ${z.prettifyError(result.error)}` };
}

export function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema) as Record<string, unknown>;
  delete json.$schema;
  return json;
}
