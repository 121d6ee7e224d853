/**
 * Embeddings from any OpenAI-compatible endpoint: `POST {base}/embeddings` with
 * `{ model, input: string[] }`, answered with `{ data: [{ index, embedding }] }` (OpenAI,
 * Ollama's /v1, llama.cpp's server, vLLM, LM Studio...). Used by the soul store
 * (runtime/store documents/) for vector search; configured from the environment:
 *
 * - `ENSOUL_EMBEDDINGS_URL`: the base URL, e.g. `http://127.0.0.1:11434/v1`; unset, no embeddings.
 * - `ENSOUL_EMBEDDINGS_MODEL`: the model (required with the URL).
 * - `ENSOUL_EMBEDDINGS_API_KEY`: sent as a bearer token, if set; never printed.
 */
import { ProviderError } from "./ProviderError.ts";

export interface EmbeddingsProvider {
  readonly model: string;
  /** One vector per text, in order. Throws a ProviderError on a failure. */
  embed(texts: string[], model?: string): Promise<number[][]>;
}

export interface EmbeddingsOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Per request (default 30 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export function createEmbeddingsProvider(options: EmbeddingsOptions): EmbeddingsProvider {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/embeddings`;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  return {
    model: options.model,
    async embed(texts, model = options.model) {
      if (texts.length === 0) return [];
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (options.apiKey) headers["authorization"] = `Bearer ${options.apiKey}`;
      let response: Response;
      try {
        response = await doFetch(url, { method: "POST", headers, body: JSON.stringify({ model, input: texts }), signal: AbortSignal.timeout(timeoutMs) });
      } catch (error) {
        const timedOut = (error as Error)?.name === "TimeoutError";
        throw new ProviderError({ provider: "embeddings", kind: timedOut ? "timeout" : "stream", message: `${url} could not be reached: ${(error as Error).message}`, cause: error });
      }
      if (!response.ok) {
        const body = (await response.text().catch(() => "")).slice(0, 300);
        const kind = response.status === 429 ? "rate_limit" : response.status >= 500 ? "server" : response.status === 401 || response.status === 403 ? "auth" : "bad_request";
        throw new ProviderError({ provider: "embeddings", kind, status: response.status, message: `${url} answered ${response.status}: ${body}` });
      }
      const json = (await response.json()) as { data?: { index?: number; embedding?: unknown }[] };
      const data = [...(json.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      if (data.length !== texts.length || !data.every((d) => Array.isArray(d.embedding) && d.embedding.every((x) => typeof x === "number"))) {
        throw new ProviderError({ provider: "embeddings", kind: "format", message: `${url} answered ${data.length} embeddings for ${texts.length} inputs, or not lists of numbers` });
      }
      return data.map((d) => d.embedding as number[]);
    },
  };
}

/** The provider the environment configures, or undefined when `ENSOUL_EMBEDDINGS_URL` is unset. */
export function embeddingsFromEnv(env: NodeJS.ProcessEnv = process.env): EmbeddingsProvider | undefined {
  const baseUrl = env["ENSOUL_EMBEDDINGS_URL"]?.trim();
  if (!baseUrl) return undefined;
  const model = env["ENSOUL_EMBEDDINGS_MODEL"]?.trim();
  if (!model) throw new Error("ENSOUL_EMBEDDINGS_URL is set but ENSOUL_EMBEDDINGS_MODEL is not: name the embeddings model");
  const apiKey = env["ENSOUL_EMBEDDINGS_API_KEY"]?.trim();
  return createEmbeddingsProvider({ baseUrl, model, ...(apiKey ? { apiKey } : {}) });
}
