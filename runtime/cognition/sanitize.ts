import { z } from "zod";

import { extractJson, parseJsonText, stripMarkdownFences } from "../providers/index.ts";

/**
 * Models often wrap structured answers in markdown fences or add a sentence around them.
 * Recovering the JSON is the providers' job (consensus needs it too); this adds the schema
 * check, with an error fit to feed back to the model.
 */
export { extractJson, stripMarkdownFences };

export type JsonAnswer<T> = { ok: true; value: T } | { ok: false; error: string };

/** Parses a model's answer against a schema; the error text is fit to feed back to the model. */
export function parseJsonAnswer<T>(text: string, schema: z.ZodType<T>): JsonAnswer<T> {
  const parsed = parseJsonText(text);
  if (!parsed.ok) return parsed;
  const result = schema.safeParse(parsed.value);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: `the JSON did not match the schema: ${z.prettifyError(result.error)}` };
}

export function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema) as Record<string, unknown>;
  delete json.$schema;
  return json;
}
