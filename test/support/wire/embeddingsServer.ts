/**
 * A local server speaking OpenAI's embeddings format: `POST /v1/embeddings` with
 * `{ model, input }` answers `{ object: "list", data: [{ object: "embedding", index, embedding }], model, usage }`.
 * Its embedding is a bag of words hashed into 64 dimensions, with a small table of synonyms
 * folded together, so similar texts get similar vectors without a model. `failing` makes it
 * answer 500s, `requests` records what it was asked.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

const DIMENSIONS = 64;
/** Words that mean the same here, so a vector search can find what BM25 cannot. */
const SYNONYMS: Record<string, string> = { automobile: "car", vehicle: "car", cars: "car", feline: "cat", kitten: "cat", cats: "cat" };

export function bagOfWords(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const word = SYNONYMS[raw] ?? raw;
    let h = 2166136261;
    for (const c of word) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    vector[h % DIMENSIONS]! += 1;
  }
  return vector;
}

export interface EmbeddingsServer {
  /** The base URL, ending in `/v1`. */
  readonly url: string;
  readonly requests: { model: string; input: string[]; authorization?: string }[];
  failing: boolean;
  close(): Promise<void>;
}

export async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const requests: EmbeddingsServer["requests"] = [];
  const state = { failing: false };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/embeddings") {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found" } }));
        return;
      }
      const { model, input } = JSON.parse(body) as { model: string; input: string | string[] };
      const inputs = Array.isArray(input) ? input : [input];
      requests.push({ model, input: inputs, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
      if (state.failing) {
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "embeddings down", type: "server_error" } }));
        return;
      }
      const data = inputs.map((text, index) => ({ object: "embedding", index, embedding: bagOfWords(text) }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data, model, usage: { prompt_tokens: 0, total_tokens: 0 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get failing() {
      return state.failing;
    },
    set failing(v: boolean) {
      state.failing = v;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
