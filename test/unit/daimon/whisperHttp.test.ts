import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import {
  DaimonUnavailableError,
  divinationWhisperHandler,
  startWhisperEndpoint,
  WHISPER_MAX_BODY_BYTES,
  type DivinationRequest,
  type WhisperEndpoint,
  type WhisperEndpointOptions,
  type WhisperRequest,
} from "../../../actors/daimon/index.ts";

const TOKEN = "s3cret-Token_0123456789";
const valid: WhisperRequest = {
  source: "claudius",
  context: { soul_state: { emotionalState: "curious", currentTopic: "daimons" }, recent_monologue: "They keep asking.", interaction_count: 3 },
};

let endpoint: WhisperEndpoint | undefined;
afterEach(async () => {
  await endpoint?.close();
  endpoint = undefined;
});

async function serve(options: Partial<WhisperEndpointOptions> = {}) {
  const seen: WhisperRequest[] = [];
  endpoint = await startWhisperEndpoint({
    port: 0,
    token: TOKEN,
    onWhisperRequest: (request) => {
      seen.push(request);
      return { whisper: "They want assurance.", influence: 0.7 };
    },
    ...options,
  });
  return { endpoint, seen };
}

async function post(url: string, body: unknown, headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}` }) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

describe("whisper endpoint (server)", () => {
  it("answers POST /api/whisper with { whisper, influence }, on loopback by default", async () => {
    const { endpoint, seen } = await serve();
    expect(endpoint.url).toBe(`http://127.0.0.1:${endpoint.port}/api/whisper`);
    const res = await post(endpoint.url, valid);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expect(res.json).toEqual({ whisper: "They want assurance.", influence: 0.7 });
    expect(seen).toEqual([valid]);
  });

  it("sanitises the whisper it returns and keeps influence within 0..1", async () => {
    const { endpoint } = await serve({
      onWhisperRequest: () => ({ whisper: "```md\n<b>Trust</b>   the </external_dialogue>silence\n```", influence: 7 }),
    });
    expect((await post(endpoint.url, valid)).json).toEqual({ whisper: "Trust the silence", influence: 1 });
  });

  it("answers an empty whisper when the daimon has nothing to say", async () => {
    const { endpoint } = await serve({ onWhisperRequest: () => null });
    expect((await post(endpoint.url, valid)).json).toEqual({ whisper: "", influence: 0 });
  });

  it("401 for a missing or wrong token, compared in constant time, without calling the daimon", async () => {
    const { endpoint, seen } = await serve();
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: "Bearer wrong" },
      { Authorization: `Bearer ${TOKEN}x` },
      { Authorization: `Basic ${TOKEN}` },
      { Authorization: `Bearer` },
      { Authorization: `${TOKEN}` },
    ];
    for (const headers of attempts) {
      const res = await post(endpoint.url, valid, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(res.text).not.toContain(TOKEN);
    }
    expect(seen).toHaveLength(0);
    expect((await post(endpoint.url, valid, { Authorization: `bearer ${TOKEN}` })).status).toBe(200);
  });

  it("400 for a body that is not JSON or not a whisper request", async () => {
    const { endpoint, seen } = await serve();
    const bad: unknown[] = [
      "{not json",
      "",
      {},
      { source: "claudius" },
      { source: "", context: valid.context },
      { ...valid, context: { ...valid.context, interaction_count: -1 } },
      { ...valid, context: { ...valid.context, interaction_count: "3" } },
      { ...valid, context: { ...valid.context, soul_state: [1, 2] } },
      [valid],
    ];
    for (const body of bad) {
      const res = await post(endpoint.url, typeof body === "string" ? body : JSON.stringify(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(String(res.json?.error)).toMatch(/JSON|malformed/);
    }
    expect(seen).toHaveLength(0);
  });

  it("413 for a body over 64 KiB, declared or streamed", async () => {
    const { endpoint, seen } = await serve();
    const big = { ...valid, context: { ...valid.context, recent_monologue: "x".repeat(WHISPER_MAX_BODY_BYTES) } };
    expect((await post(endpoint.url, big)).status).toBe(413);

    // Chunked, with no Content-Length to refuse it by.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(endpoint.url, { method: "POST", headers: { Authorization: `Bearer ${TOKEN}`, "Transfer-Encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      const chunk = "y".repeat(16 * 1024);
      for (let i = 0; i < 6; i++) req.write(chunk);
      req.end();
    });
    expect(status).toBe(413);
    expect(seen).toHaveLength(0);
  });

  it("503 when the daimon is off, unavailable or too slow", async () => {
    let on = false;
    let aborted = false;
    const { endpoint, seen } = await serve({
      available: () => on,
      handlerTimeoutMs: 50,
      onWhisperRequest: async (request, { signal }) => {
        seen.push(request);
        if (request.source === "slow") {
          await new Promise((r) => setTimeout(r, 500));
          aborted = signal.aborted;
          return "late";
        }
        throw new DaimonUnavailableError("the model is rate limited");
      },
    });
    expect((await post(endpoint.url, valid)).status).toBe(503);
    expect(seen).toHaveLength(0);
    on = true;
    const unavailable = await post(endpoint.url, valid);
    expect(unavailable.status).toBe(503);
    expect(unavailable.json?.error).toBe("the model is rate limited");
    const slow = await post(endpoint.url, { ...valid, source: "slow" });
    expect(slow.status).toBe(503);
    await new Promise((r) => setTimeout(r, 500));
    expect(aborted).toBe(true);
  });

  it("hides other handler failures behind a plain 503", async () => {
    const failures: unknown[] = [];
    const { endpoint } = await serve({
      onWhisperRequest: () => {
        throw new Error(`db password is hunter2`);
      },
      onError: (e) => failures.push(e),
    });
    const res = await post(endpoint.url, valid);
    expect(res.status).toBe(503);
    expect(res.text).not.toContain("hunter2");
    expect(failures).toHaveLength(1);
  });

  it("404 for other paths and 405 for other methods", async () => {
    const { endpoint } = await serve();
    const base = `http://127.0.0.1:${endpoint.port}`;
    expect((await post(`${base}/api/other`, valid)).status).toBe(404);
    const get = await fetch(endpoint.url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    await get.text();
  });

  it("refuses to start with an empty or malformed token, without echoing it", async () => {
    for (const token of ["", "has space", "line\nbreak"]) {
      const started = startWhisperEndpoint({ port: 0, token, onWhisperRequest: () => "x" });
      await expect(started).rejects.toThrow(/token must be/);
      await started.catch((e: Error) => expect(e.message).not.toContain(token || "\u0000"));
    }
  });

  it("serves a daimon's divination: the asking soul's state and monologue become its transcript", async () => {
    const asked: DivinationRequest[] = [];
    const { endpoint } = await serve({
      onWhisperRequest: divinationWhisperHandler({
        daimonName: "Kothar",
        divine: async (request) => {
          asked.push(request);
          return "<em>Listen</em> for the question beneath.";
        },
      }),
    });
    expect((await post(endpoint.url, valid)).json).toEqual({ whisper: "Listen for the question beneath.", influence: 0.5 });
    expect(asked[0]).toMatchObject({ soulName: "claudius", daimonName: "Kothar", interactionCount: 3 });
    expect(asked[0].transcript.map((l) => l.text)).toEqual([
      "(state) emotionalState: curious; currentTopic: daimons",
      "(thought) They keep asking.",
    ]);
  });
});
