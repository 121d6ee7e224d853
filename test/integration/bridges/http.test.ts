/**
 * The HTTP bridge end to end: a real node on the in-process bus with a real LMDB, the bridge
 * on a loopback port, and a client speaking plain HTTP, SSE and WebSocket (docs/HTTP.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { decodeEnvelope, type Envelope } from "../../../runtime/bus/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { openSse } from "../../support/bridges/sse.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const TOKEN = "http-bridge-test-token-7f3a";
const auth = { Authorization: `Bearer ${TOKEN}` };

const config = (port = 0, rateLimit = { perMinute: 6000, burst: 200 }) =>
  parseClusterConfig({
    cluster: "web",
    souls: [{ id: "echo", blueprint: echoSoul }],
    bridges: [{ type: "http", soul: "echo", options: { port, maxBodyBytes: 4096, rateLimit } }],
    runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
  });

async function start(data: string, port = 0, rateLimit?: { perMinute: number; burst: number }): Promise<{ node: EnsoulNode; base: string }> {
  const node = await startNode({ config: config(port, rateLimit), data, store: { noSync: true }, env: { ENSOUL_HTTP_TOKEN: TOKEN }, log: () => undefined });
  const url = node.status().bridges?.[0]?.url;
  if (!url) throw new Error(`no bridge url in ${JSON.stringify(node.status().bridges)}`);
  return { node, base: url.replace(/\/v1\/souls\/echo\/$/, "") };
}

const post = (base: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/v1/souls/echo/perceptions`, { method: "POST", headers: { "Content-Type": "application/json", ...auth, ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });

describe("the HTTP bridge", () => {
  let node: EnsoulNode;
  let base: string;
  let data: string;

  beforeAll(async () => {
    data = dirs.make();
    ({ node, base } = await start(data));
  });
  afterAll(async () => {
    await node?.stop();
  });

  it("takes a perception (202 with its id) and streams the answer as SSE events with resumable ids", async () => {
    const sse = await openSse(`${base}/v1/souls/echo/speech`, auth);
    const res = await post(base, { content: "hello there", name: "Ada" });
    expect(res.status).toBe(202);
    const { id, status } = (await res.json()) as { id: string; status: string };
    expect(status).toBe("accepted");
    const events = await sse.until((es) => es.some((e) => e.event === "final" && JSON.parse(e.data).perception === id));
    sse.close();
    const final = events.find((e) => e.event === "final")!;
    expect(JSON.parse(final.data)).toMatchObject({ perception: id, text: "echo: hello there" });
    expect(Number(final.id)).toBeGreaterThan(0);

    // Resumed from before it: the same event again, with the same id.
    const resumed = await openSse(`${base}/v1/souls/echo/speech`, { ...auth, "Last-Event-ID": String(Number(final.id) - 1) });
    const again = await resumed.until((es) => es.some((e) => e.event === "final"));
    resumed.close();
    expect(again.find((e) => e.event === "final")).toEqual(final);
  });

  it("answers once per Idempotency-Key: a repeat returns the same id and adds no second answer", async () => {
    const sse = await openSse(`${base}/v1/souls/echo/speech`, auth);
    const first = await post(base, { content: "once only", name: "Ada" }, { "Idempotency-Key": "order-42" });
    const { id } = (await first.json()) as { id: string };
    await sse.until((es) => es.some((e) => e.event === "final" && JSON.parse(e.data).perception === id));
    const second = await post(base, { content: "once only", name: "Ada" }, { "Idempotency-Key": "order-42" });
    expect(second.status).toBe(202);
    expect(await second.json()).toEqual({ id, status: "duplicate" });
    // Another perception after it: once its answer is here, a second answer to the first would have been too.
    const later = (await (await post(base, { content: "after", name: "Ada" })).json()) as { id: string };
    await sse.until((es) => es.some((e) => e.event === "final" && JSON.parse(e.data).perception === later.id));
    sse.close();
    expect(sse.events.filter((e) => e.event === "final" && JSON.parse(e.data).perception === id)).toHaveLength(1);
    expect(node.status().bridges?.[0]?.counters["duplicates"]).toBeGreaterThanOrEqual(1);
  });

  it("refuses what it must with a JSON error, and publishes nothing for it", async () => {
    const published: Envelope[] = [];
    const sub = node.bus.subscribe(node.subjects.perceive("echo"), (msg) => {
      const d = decodeEnvelope(msg.data);
      if (d.ok) published.push(d.envelope);
    });
    const cases: [Promise<Response>, number, RegExp][] = [
      [fetch(`${base}/v1/souls/echo/perceptions`, { method: "POST", body: "{}" }), 401, /bearer token/],
      [post(base, { content: "x", name: "Ada" }, { Authorization: "Bearer wrong" }), 401, /bearer token/],
      [post(base, "{not json", {}), 400, /not valid JSON/],
      [post(base, { content: "x" }), 400, /name/],
      [post(base, { content: "x", name: "Ada", action: "said\u0007" }), 400, /control characters/],
      [post(base, { content: "x".repeat(5000), name: "Ada" }), 413, /too large/],
      [fetch(`${base}/v1/souls/nobody/perceptions`, { method: "POST", headers: auth, body: "{}" }), 404, /unknown soul 'nobody'/],
      [fetch(`${base}/v1/souls/echo/perceptions`, { headers: auth }), 405, /use POST/],
      [fetch(`${base}/v2/nothing`, { headers: auth }), 404, /not found/],
    ];
    for (const [pending, status, error] of cases) {
      const res = await pending;
      expect(res.status, `${status} ${error}`).toBe(status);
      expect(res.headers.get("content-type")).toMatch(/application\/json/);
      expect(((await res.json()) as { error: string }).error).toMatch(error);
    }
    await new Promise((r) => setTimeout(r, 50));
    sub.unsubscribe();
    expect(published).toEqual([]);
  });

  it("serves /healthz and /readyz without a token (which souls it serves only with one), and shows the bridge online in the node's status", async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true });
    const told = await fetch(`${base}/readyz`, { headers: auth });
    expect(await told.json()).toEqual({ ok: true, souls: [{ soul: "echo", ready: true }] });
    expect(node.status().bridges?.[0]).toMatchObject({ name: "http-echo", type: "http", soul: "echo", state: "online" });
  });

  it("carries both directions on the WebSocket: accepted, then the answer to that perception", async () => {
    const ws = new WebSocket(`${base.replace("http", "ws")}/v1/souls/echo/ws`, { headers: auth });
    const frames: { type: string; id?: string; perception?: string; text?: string }[] = [];
    ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
    ws.send(JSON.stringify({ type: "perception", content: "over the socket", name: "Grace", idempotencyKey: "ws-1" }));
    ws.send("{nope");
    const deadline = Date.now() + 10_000;
    while (!frames.some((f) => f.type === "final") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    ws.close();
    const accepted = frames.find((f) => f.type === "accepted")!;
    expect(accepted.id).toBeTruthy();
    expect(frames.find((f) => f.type === "final")).toMatchObject({ perception: accepted.id, text: "echo: over the socket" });
    expect(frames.find((f) => f.type === "error")).toMatchObject({ status: 400 });

    const refused = new WebSocket(`${base.replace("http", "ws")}/v1/souls/echo/ws`);
    const status = await new Promise<number>((resolve) => refused.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0)));
    expect(status).toBe(401);
  });
});

describe("the HTTP bridge across a restart", () => {
  it("keeps an Idempotency-Key's answer once, and the speech log resumable, after the node restarts on the same data", async () => {
    const data = dirs.make();
    let { node, base } = await start(data);
    const sse = await openSse(`${base}/v1/souls/echo/speech`, auth);
    const { id } = (await (await post(base, { content: "before", name: "Ada" }, { "Idempotency-Key": "k-restart" })).json()) as { id: string };
    const events = await sse.until((es) => es.some((e) => e.event === "final" && JSON.parse(e.data).perception === id));
    sse.close();
    const final = events.find((e) => e.event === "final")!;
    await node.stop();

    ({ node, base } = await start(data));
    try {
      const repeat = await post(base, { content: "before", name: "Ada" }, { "Idempotency-Key": "k-restart" });
      expect(await repeat.json()).toEqual({ id, status: "duplicate" });
      const resumed = await openSse(`${base}/v1/souls/echo/speech`, { ...auth, "Last-Event-ID": "0" });
      await resumed.until((es) => es.some((e) => e.event === "final"));
      await new Promise((r) => setTimeout(r, 100));
      resumed.close();
      expect(resumed.events.filter((e) => e.event === "final")).toEqual([final]);
    } finally {
      await node.stop();
    }
  });

  it("answers a flood with 429 and Retry-After", async () => {
    const { node, base } = await start(dirs.make(), 0, { perMinute: 60, burst: 3 });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await fetch(`${base}/v1/souls/echo/speech-nope`, { headers: auth })).status);
      expect(statuses.slice(0, 3)).toEqual([404, 404, 404]);
      const limited = await fetch(`${base}/v1/souls/echo/perceptions`, { method: "POST", headers: auth, body: "{}" });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await node.stop();
    }
  });

  it("does not start without ENSOUL_HTTP_TOKEN, and neither does the node (bridgeStart.test.ts: unless the bridge is optional)", async () => {
    await expect(startNode({ config: config(), data: dirs.make(), store: { noSync: true }, env: {}, log: () => undefined })).rejects.toThrow(/http-echo .*cannot start: .*ENSOUL_HTTP_TOKEN/);
  });
});
