/**
 * The HTTP bridge's bounds (docs/HTTP.md 1 and 9), each against a real node on a loopback
 * port: WebSocket frames count against the rate limit, a frame over `maxBodyBytes` closes its
 * connection, speech streams are capped and a client that stops reading is dropped, and a body
 * over the limit is answered 413 in a way a client that is still sending can read.
 */
import { connect } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { openSse } from "../../support/bridges/sse.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const TOKEN = "http-limits-token-5c1d";
const auth = { Authorization: `Bearer ${TOKEN}` };

async function start(options: Record<string, unknown>): Promise<{ node: EnsoulNode; base: string }> {
  const config = parseClusterConfig({
    cluster: "web",
    souls: [{ id: "echo", blueprint: echoSoul }],
    bridges: [{ type: "http", soul: "echo", options: { port: 0, rateLimit: { perMinute: 60_000, burst: 10_000 }, ...options } }],
    runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
  });
  const node = await startNode({ config, data: dirs.make(), store: { noSync: true }, env: { ENSOUL_HTTP_TOKEN: TOKEN }, log: () => undefined });
  const url = node.status().bridges?.[0]?.url;
  if (!url) throw new Error(`no bridge url in ${JSON.stringify(node.status().bridges)}`);
  return { node, base: url.replace(/\/v1\/souls\/echo\/$/, "") };
}

type Frame = { type: string; status?: number; retryAfter?: number };

async function openSocket(base: string): Promise<{ ws: WebSocket; frames: Frame[]; closed: Promise<number> }> {
  const ws = new WebSocket(`${base.replace("http", "ws")}/v1/souls/echo/ws`, { headers: auth });
  const frames: Frame[] = [];
  ws.on("message", (d) => frames.push(JSON.parse(d.toString()) as Frame));
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  return { ws, frames, closed };
}

/** The status line the server sends to a WebSocket upgrade it refuses. */
function upgradeStatus(base: string): Promise<number> {
  const ws = new WebSocket(`${base.replace("http", "ws")}/v1/souls/echo/ws`, { headers: auth });
  return new Promise((resolve) => {
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.once("open", () => (ws.close(), resolve(101)));
    ws.once("error", () => undefined);
  });
}

/** A client that sends its whole body before it reads a byte of the answer (as curl and many clients do). */
function sendThenRead(base: string, chunks: number, chunkBytes = 64 * 1024): Promise<{ response: string; error?: string }> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let response = "";
    let error: string | undefined;
    socket.pause();
    socket.on("error", (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    socket.on("close", () => resolve({ response, ...(error ? { error } : {}) }));
    socket.on("data", (d: Buffer) => (response += d.toString("latin1")));
    socket.write(`POST /v1/souls/echo/perceptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    let sent = 0;
    const next = () => {
      if (socket.destroyed) return;
      if (sent++ === chunks) return void (socket.write("0\r\n\r\n"), socket.resume());
      socket.write(`${chunkBytes.toString(16)}\r\n${"a".repeat(chunkBytes)}\r\n`);
      setTimeout(next, 10);
    };
    next();
  });
}

describe("the HTTP bridge's limits", () => {
  it("counts WebSocket perception frames against the client's rate limit, as it counts requests", async () => {
    const { node, base } = await start({ rateLimit: { perMinute: 60, burst: 3 } });
    try {
      const { ws, frames } = await openSocket(base);
      for (let i = 0; i < 6; i++) ws.send(JSON.stringify({ type: "perception", content: `flood ${i}`, name: "Ada" }));
      await until(() => frames.filter((f) => f.type === "accepted" || f.type === "error").length === 6, 10_000, "an answer to every frame");
      ws.close();
      // The upgrade took one of the three; two frames go through, the rest are refused with when to retry.
      expect(frames.filter((f) => f.type === "accepted")).toHaveLength(2);
      const refused = frames.filter((f) => f.type === "error");
      expect(refused).toHaveLength(4);
      expect(refused.every((f) => f.status === 429 && (f.retryAfter ?? 0) > 0)).toBe(true);
    } finally {
      await node.stop();
    }
  });

  it("closes a WebSocket whose frame is over maxBodyBytes (1009), without buffering 16 MiB for it", async () => {
    const { node, base } = await start({ maxBodyBytes: 4096 });
    try {
      const { ws, closed } = await openSocket(base);
      ws.send(JSON.stringify({ type: "perception", content: "x".repeat(10_000), name: "Ada" }));
      expect(await closed).toBe(1009);
      // The node keeps serving: a new connection works.
      const again = await openSocket(base);
      again.ws.send(JSON.stringify({ type: "perception", content: "small", name: "Ada" }));
      await until(() => again.frames.some((f) => f.type === "final"), 10_000, "the answer on a new connection");
      again.ws.close();
    } finally {
      await node.stop();
    }
  });

  it("caps speech streams: past maxStreams an SSE client and a WebSocket get 503, and a place freed is taken again", async () => {
    const { node, base } = await start({ maxStreams: 2 });
    try {
      const first = await openSse(`${base}/v1/souls/echo/speech`, auth);
      const { ws } = await openSocket(base);
      const refused = await fetch(`${base}/v1/souls/echo/speech`, { headers: auth });
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: string }).error).toMatch(/too many speech streams/);
      expect(await upgradeStatus(base)).toBe(503);
      first.close();
      ws.close();
      // The server hears of the closes a moment later.
      let status = 0;
      for (let tries = 0; tries < 100 && status !== 101; tries++) {
        await new Promise((r) => setTimeout(r, 50));
        status = await upgradeStatus(base);
      }
      expect(status).toBe(101);
    } finally {
      await node.stop();
    }
  });

  it("holds at most maxConnections connections: one more is closed as it comes, and a connection freed is taken again", async () => {
    const { node, base } = await start({ maxConnections: 3 });
    const url = new URL(base);
    const open = (): Promise<{ socket: ReturnType<typeof connect>; closed: Promise<void> }> =>
      new Promise((resolve) => {
        const socket = connect(Number(url.port), url.hostname);
        socket.on("error", () => undefined);
        const closed = new Promise<void>((r) => socket.once("close", () => r()));
        socket.once("connect", () => resolve({ socket, closed }));
      });
    try {
      const held = [await open(), await open(), await open()];
      // Give the server the moment it takes to count them.
      await new Promise((r) => setTimeout(r, 100));
      const extra = await open();
      let closed = false;
      void extra.closed.then(() => (closed = true));
      await until(() => closed, 5_000, "the connection over the cap closed");
      for (const h of held) h.socket.destroy();
      let status = 0;
      for (let tries = 0; tries < 100 && status !== 200; tries++) {
        await new Promise((r) => setTimeout(r, 50));
        status = await fetch(`${base}/healthz`).then((r) => r.status, () => 0);
      }
      expect(status).toBe(200);
    } finally {
      await node.stop();
    }
  });

  it("drops an SSE client that stops reading instead of buffering the soul's speech for it without bound", async () => {
    const { node, base } = await start({ maxBodyBytes: 1024 * 1024 });
    try {
      const url = new URL(base);
      const socket = connect(Number(url.port), url.hostname);
      let received = 0;
      let ended = false;
      socket.on("data", (d: Buffer) => (received += d.length));
      socket.on("close", () => (ended = true));
      socket.on("error", () => undefined);
      socket.write(`GET /v1/souls/echo/speech HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
      await until(() => received > 0, 10_000, "the stream's head");
      socket.pause();
      // About 8 MB of speech, more than the socket buffers hold on both sides.
      const text = "y".repeat(128 * 1024);
      for (let i = 0; i < 64; i++) {
        const res = await fetch(`${base}/v1/souls/echo/perceptions`, { method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: JSON.stringify({ content: text, name: "Ada" }) });
        expect(res.status).toBe(202);
      }
      await node.idle();
      socket.resume();
      await until(() => ended, 10_000, "the slow client dropped");
      // It got part of what was said, not all of it: the rest was never held for it.
      expect(received).toBeLessThan(64 * text.length);
    } finally {
      await node.stop();
    }
  });

  it("answers a body over the limit with 413 that a client still sending can read (not a reset)", async () => {
    const { node, base } = await start({ maxBodyBytes: 4096 });
    try {
      for (let i = 0; i < 3; i++) {
        const outcome = await sendThenRead(base, 16);
        expect(outcome.response.slice(0, 12), JSON.stringify(outcome.error)).toBe("HTTP/1.1 413");
        expect(outcome.response).toMatch(/body too large; the limit is 4096 bytes/);
      }
    } finally {
      await node.stop();
    }
  });
});
