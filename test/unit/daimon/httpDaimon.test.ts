import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  httpDaimon,
  startDaimon,
  startWhisperEndpoint,
  WhisperClientError,
  type DaimonHandle,
  type DivinationRequest,
  type WhisperEndpoint,
  type WhisperRequest,
} from "../../../actors/daimon/index.ts";
import { createInProcessBus } from "../../../runtime/bus/index.ts";
import { clusterSubjects, collect, sayToSoul, soulSays, until } from "./daimonTestKit.ts";

const TOKEN = "tok-9f8e7d6c5b4a-SECRET";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function divinationRequest(extra: Partial<DivinationRequest> = {}): DivinationRequest {
  return {
    soulName: "Ann",
    daimonName: "Kothar",
    transcript: [
      { speaker: "Bob", role: "other", text: "Is it going to be fine?" },
      { speaker: "Ann", role: "soul", text: "Yes." },
    ],
    interactionCount: 2,
    signal: new AbortController().signal,
    ...extra,
  };
}

/** A real whisper endpoint, counting the requests that reach it. */
async function endpointWith(answer: () => string | null, available = () => true) {
  const seen: WhisperRequest[] = [];
  let hits = 0;
  const endpoint: WhisperEndpoint = await startWhisperEndpoint({
    port: 0,
    token: TOKEN,
    available: () => {
      hits++;
      return available();
    },
    onWhisperRequest: (request) => {
      seen.push(request);
      return answer();
    },
  });
  closers.push(() => endpoint.close());
  return { endpoint, seen, hits: () => hits };
}

/** A bare server for the answers a well-behaved endpoint never gives. */
async function rawServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; requests: () => number; headers: IncomingMessage["headers"][] }> {
  let count = 0;
  const headers: IncomingMessage["headers"][] = [];
  const server: Server = createServer((req, res) => {
    count++;
    headers.push(req.headers);
    req.resume();
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => count, headers };
}

/** The token must not be anywhere a log line or error report could pick it up. */
function expectNoToken(error: unknown): void {
  const e = error as Error & { cause?: unknown };
  for (const text of [String(e), e.message, e.stack ?? "", JSON.stringify(e), String(e.cause ?? "")]) expect(text).not.toContain(TOKEN);
}

async function failure(promise: Promise<unknown>): Promise<WhisperClientError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(WhisperClientError);
    expectNoToken(error);
    return error as WhisperClientError;
  }
  throw new Error("expected a failure");
}

describe("httpDaimon (client)", () => {
  it("asks with the protocol's body and bearer token, and returns the sanitised whisper", async () => {
    const { endpoint, seen } = await endpointWith(() => "They <b>want</b> assurance.");
    // A bare origin gets the protocol's path.
    const divine = httpDaimon({ url: endpoint.url.replace("/api/whisper", ""), token: TOKEN });
    expect(await divine(divinationRequest())).toBe("They want assurance.");
    expect(seen).toEqual([
      { source: "Ann", context: { soul_state: {}, recent_monologue: "Bob: Is it going to be fine?\nAnn: Yes.", interaction_count: 2 } },
    ]);
  });

  it("401: a clear error, and no further requests with that token", async () => {
    const { endpoint, hits } = await endpointWith(() => "x");
    const divine = httpDaimon({ url: endpoint.url, token: "not-the-token" });
    const first = await failure(divine(divinationRequest()));
    expect(first.kind).toBe("unauthorized");
    expect(first.status).toBe(401);
    expect(first.message).toMatch(/refused the token \(HTTP 401\)/);
    const raw = await rawServer((_, res) => res.writeHead(401).end());
    const withSecret = httpDaimon({ url: raw.url, token: TOKEN });
    const refused = await failure(withSecret(divinationRequest()));
    expect(refused.kind).toBe("unauthorized");
    expect((await failure(withSecret(divinationRequest()))).kind).toBe("unauthorized");
    expect(raw.requests()).toBe(1);
    expect(raw.headers[0].authorization).toBe(`Bearer ${TOKEN}`);
    expect(hits()).toBe(0);
  });

  it("503 (and 429) mean no whisper this time, not an error", async () => {
    const off = await endpointWith(() => "x", () => false);
    expect(await httpDaimon({ url: off.endpoint.url, token: TOKEN })(divinationRequest())).toBeNull();
    const limited = await rawServer((_, res) => res.writeHead(429).end());
    expect(await httpDaimon({ url: limited.url, token: TOKEN })(divinationRequest())).toBeNull();
    const empty = await endpointWith(() => "");
    expect(await httpDaimon({ url: empty.endpoint.url, token: TOKEN })(divinationRequest())).toBeNull();
  });

  it("times out with a clear error that names the endpoint but not the token", async () => {
    const hang = await rawServer(() => undefined);
    const started = Date.now();
    const error = await failure(httpDaimon({ url: `${hang.url}/api/whisper?key=${TOKEN}`, token: TOKEN, timeoutMs: 100 })(divinationRequest()));
    expect(error.kind).toBe("timeout");
    expect(error.message).toBe(`no answer from ${hang.url}/api/whisper within 100 ms`);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("reports an unreachable service, a non-JSON answer and other statuses, never with the token", async () => {
    const gone = await rawServer(() => undefined);
    const port = new URL(gone.url).port;
    await closers.pop()?.();
    const unreachable = await failure(httpDaimon({ url: `http://127.0.0.1:${port}/api/whisper`, token: TOKEN })(divinationRequest()));
    expect(unreachable.kind).toBe("unreachable");
    expect(unreachable.message).toMatch(/ECONNREFUSED/);

    const html = await rawServer((_, res) => res.writeHead(200, { "Content-Type": "text/html" }).end("<html>"));
    expect((await failure(httpDaimon({ url: html.url, token: TOKEN })(divinationRequest()))).kind).toBe("bad-response");
    const shape = await rawServer((_, res) => res.writeHead(200).end(JSON.stringify({ whisper: 42 })));
    expect((await failure(httpDaimon({ url: shape.url, token: TOKEN })(divinationRequest()))).kind).toBe("bad-response");
    const broken = await rawServer((_, res) => res.writeHead(500).end(`token was ${TOKEN}`));
    const error = await failure(httpDaimon({ url: broken.url, token: TOKEN })(divinationRequest()));
    expect(error).toMatchObject({ kind: "http", status: 500 });
  });

  it("stops when the daimon aborts the divination", async () => {
    const hang = await rawServer(() => undefined);
    const controller = new AbortController();
    const pending = httpDaimon({ url: hang.url, token: TOKEN, timeoutMs: 5000 })(divinationRequest({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 20);
    expect((await failure(pending)).kind).toBe("aborted");
  });

  it("refuses a malformed token or URL at once, without echoing the token", () => {
    for (const token of ["", "two words", `${TOKEN}\n`]) {
      try {
        httpDaimon({ url: "http://127.0.0.1:1/api/whisper", token });
        throw new Error("expected a throw");
      } catch (e) {
        expect((e as Error).message).toMatch(/token must be/);
        if (token) expect((e as Error).message).not.toContain(token.trim());
      }
    }
    expect(() => httpDaimon({ url: "ftp://x/api/whisper", token: TOKEN })).toThrow(/http or https/);
    const withCredentials = () => httpDaimon({ url: `http://user:${TOKEN}@127.0.0.1:1/api/whisper`, token: TOKEN });
    expect(withCredentials).toThrow(/must not contain credentials/);
    expect(withCredentials).not.toThrow(TOKEN);
    expect(() => httpDaimon({ url: "not a url", token: TOKEN })).toThrow(/not a valid URL/);
  });

  it("plugs into a daimon in place of its own model", async () => {
    const remote = await endpointWith(() => "Ask what they are afraid of.");
    const bus = createInProcessBus({ cluster: "daimon_http" });
    const subjects = clusterSubjects("daimon_http");
    const whispers = collect(bus, subjects.whisper("ann")).envelopes;
    const daimon: DaimonHandle = startDaimon({
      bus,
      soulId: "ann",
      soulName: "Ann",
      daimon: { name: "Kothar", mode: "whisper", everyN: 1, divine: httpDaimon({ url: remote.endpoint.url, token: TOKEN }) },
    });
    closers.push(async () => {
      await daimon.stop();
      await bus.close();
    });
    await sayToSoul(bus, subjects, "ann", "Bob", "I keep coming back to this.");
    await soulSays(bus, subjects, "ann", "I noticed.");
    await until(() => whispers.length === 1);
    expect(whispers[0].body).toEqual({ content: "Ask what they are afraid of.", source: "Kothar" });
    expect(remote.seen[0].context.recent_monologue).toBe("Bob: I keep coming back to this.\nAnn: I noticed.");
    expect(remote.seen[0].context.interaction_count).toBe(1);
  });
});
