/**
 * No request, frame or soul's bug ends the node (issue 23, item 5). `ensoul up` runs in a
 * child process with two souls behind HTTP bridges on one port, its debugger and its metrics
 * served; the test sends each server what clients should not send (fast-check draws methods,
 * paths with malformed escapes, headers past every limit, bodies that lie about their length,
 * WebSocket upgrades followed by broken frames, clients resetting mid-handshake), holds slow
 * clients open, and then checks the process is alive and a perception is still answered. A
 * soul whose process leaves an exception or a rejection nothing catches is restarted, alone.
 */
import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSse } from "../../support/bridges/sse.ts";
import { repoRoot, spawnNode, type NodeProcess } from "../../support/cluster/cliProcess.ts";
import { freePort } from "../../support/ports.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-http-fuzz-");
const TOKEN = "fuzz-token-0f3c9a";
let node: NodeProcess;
let port: number;
let base: string;
/** The node's other servers, fuzzed alike: the debugger (--debug) and the metrics (--metrics). */
const ports = { bridge: 0, debugger: 0, metrics: 0 };

beforeAll(async () => {
  port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const config = join(repoRoot, "test", "support", "bridges", "httpFuzzCluster.config.ts");
  node = spawnNode([config, "--data", dirs.make(), "--debug", "0", "--metrics", "0"], { ENSOUL_HTTP_TOKEN: TOKEN, ENSOUL_DEBUG_TOKEN: TOKEN, ENSOUL_TEST_HTTP_PORT: String(port) });
  await node.waitFor(/ensoul up: ready/, 60_000);
  ports.bridge = port;
  ports.debugger = Number(/debugger at http:\/\/127\.0\.0\.1:(\d+)\//.exec(node.output())?.[1]);
  ports.metrics = Number(/metrics at http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(node.output())?.[1]);
  expect(ports.debugger > 0 && ports.metrics > 0, node.output()).toBe(true);
}, 90_000);
afterAll(async () => {
  await node?.kill("SIGKILL");
  dirs.cleanup();
});

const alive = () => node.child.exitCode === null && node.child.signalCode === null;

/**
 * Writes `parts` on a raw connection (the later ones a moment apart), and resolves with what
 * came back once it closes or `waitMs` passes after the last write (wide by default: a loaded
 * machine may take a while to answer; the fuzz, which only needs the process alive, waits less).
 */
function exchange(parts: (string | Buffer)[], waitMs = 3_000, reset = false, to = port): Promise<string> {
  return new Promise((resolve) => {
    const socket: Socket = connect(to, "127.0.0.1");
    let got = "";
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(got);
    };
    let timer = setTimeout(finish, 10_000);
    socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
    socket.on("error", finish);
    socket.on("close", finish);
    socket.on("connect", async () => {
      for (const [i, part] of parts.entries()) {
        if (socket.destroyed) return;
        if (i > 0) await new Promise((r) => setTimeout(r, 15));
        socket.write(part);
      }
      clearTimeout(timer);
      // A reset (RST) instead of a close, once the server has had the request a moment.
      timer = setTimeout(() => (reset && !socket.destroyed ? (socket.resetAndDestroy(), finish()) : finish()), waitMs);
    });
  });
}

/** A client frame, masked as RFC 6455 asks of clients (or not, when `masked` is false: a protocol error). */
function wsFrame(opcode: number, payload: Buffer, { masked = true, fin = true, rsv = 0 } = {}): Buffer {
  const head = [(fin ? 0x80 : 0) | (rsv << 4) | opcode];
  const len = payload.length;
  if (len < 126) head.push((masked ? 0x80 : 0) | len);
  else if (len < 65_536) head.push((masked ? 0x80 : 0) | 126, len >> 8, len & 0xff);
  else head.push((masked ? 0x80 : 0) | 127, 0, 0, 0, 0, (len >>> 24) & 0xff, (len >> 16) & 0xff, (len >> 8) & 0xff, len & 0xff);
  if (!masked) return Buffer.concat([Buffer.from(head), payload]);
  const mask = randomBytes(4);
  const body = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
  return Buffer.concat([Buffer.from(head), mask, body]);
}

const WS_KEY = "dGhlIHNhbXBsZSBub25jZQ==";
const upgradeHead = (path: string, auth = `Bearer ${TOKEN}`) =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${WS_KEY}\r\n\r\n`;

// ---- what fast-check draws -------------------------------------------------------------

/** Mostly what a server expects (so the draw reaches the routes behind the checks), sometimes anything. */
const mostly = <T>(usual: fc.Arbitrary<T>, unusual: fc.Arbitrary<T>) => fc.oneof({ arbitrary: usual, weight: 4 }, { arbitrary: unusual, weight: 1 });

const segment = mostly(
  fc.constantFrom("echo", "fragile"),
  fc.oneof(
    fc.constantFrom("nobody", "%E0%A4%A", "%", "%zz", "%00", "%2F..", "%C0%AF", "..", "", "e%63ho", "%F0%9F%98%80", "%ED%A0%80"),
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
    fc.stringMatching(/^[%A-Za-z0-9._~!$&'()*+,;=:@-]{0,30}$/),
  ),
);
const path = mostly(
  fc.tuple(segment, mostly(fc.constantFrom("perceptions", "speech", "ws"), fc.constantFrom("ws/", "x", ""))).map(([s, v]) => `/v1/souls/${s}/${v}`),
  fc.oneof(
    fc.constantFrom("/", "/healthz", "/readyz", "/api/whisper", "//", "/v1/souls//ws", "*", "http://[bad/", "http://x:99999/", "/%", "/?%E0%A4%A", "/readyz?a=%"),
    fc.stringMatching(/^\/[\x21-\x7e]{0,60}$/),
  ),
);
/** The debugger's API and page, and the metrics endpoint. */
const otherPath = fc.oneof(
  fc.constantFrom("/", "/app.js", "/app.css", "/api/souls", "/api/events", "/metrics", "/?token=" + TOKEN, "/?token=%E0%A4%A", "/api/souls/%E0%A4%A/turns"),
  fc.tuple(segment, fc.constantFrom("", "/turns", "/revert"), fc.stringMatching(/^[?&=a-z0-9%-]{0,20}$/)).map(([id, verb, query]) => `/api/souls/${id}${verb}${query ? `?${query}` : ""}`),
);
const headerText = mostly(fc.stringMatching(/^[\x20-\x7e]{1,40}$/), fc.stringMatching(/^[\x01\x09\x20-\x7e]{0,40}$/));
const frame = fc.oneof(
  fc.record({ content: fc.string({ maxLength: 50 }), key: fc.option(headerText, { nil: undefined }) }).map(({ content, key }) =>
    wsFrame(1, Buffer.from(JSON.stringify({ type: "perception", content, name: "Fuzz", ...(key !== undefined ? { idempotencyKey: key } : {}) }))),
  ),
  fc.json({ maxDepth: 2 }).map((j) => wsFrame(1, Buffer.from(j))),
  fc.uint8Array({ maxLength: 64 }).map((b) => wsFrame(2, Buffer.from(b))),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b)),
  fc.constantFrom(
    wsFrame(1, Buffer.from("{}"), { masked: false }),
    wsFrame(1, Buffer.from("x"), { rsv: 3 }),
    wsFrame(3, Buffer.from("reserved opcode")),
    wsFrame(9, Buffer.alloc(200)),
    wsFrame(1, Buffer.from([0xc3, 0x28])),
    wsFrame(1, Buffer.alloc(9000, 0x61)),
    Buffer.from([0x81, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
    wsFrame(8, Buffer.from([0x03, 0xe8])),
  ),
);
/** Any request, an upgrade or not, with frames after it. */
const anyRequest = fc.record({
  server: fc.constantFrom("bridge", "bridge", "bridge", "debugger", "metrics") as fc.Arbitrary<keyof typeof ports>,
  method: mostly(fc.constantFrom("GET", "POST"), fc.constantFrom("PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "BREW", "G\u0001T")),
  path: fc.oneof({ arbitrary: path, weight: 3 }, { arbitrary: otherPath, weight: 1 }),
  auth: mostly(fc.constant("good" as const), fc.constantFrom("bad" as const, "none" as const, "weird" as const)),
  upgrade: fc.constantFrom("none", "none", "good", "badKey"),
  huge: mostly(fc.constant(0), fc.constantFrom(12_000, 70_000)),
  extra: fc.array(fc.tuple(fc.constantFrom("Last-Event-ID", "Idempotency-Key", "Content-Type", "Transfer-Encoding", "Expect", "X-Fuzz", "Sec-WebSocket-Protocol"), headerText), { maxLength: 3 }),
  contentLength: mostly(fc.constant(undefined), fc.integer({ min: 0, max: 10_000_000 })),
  body: fc.oneof(
    fc.constant(""),
    fc.json({ maxDepth: 2 }),
    fc.record({ content: fc.string({ maxLength: 40 }), name: fc.string({ maxLength: 10 }) }).map((b) => JSON.stringify(b)),
    fc.integer({ min: -2, max: 5 }).map((turn) => JSON.stringify({ turn })),
    fc.constant(JSON.stringify({ content: "x".repeat(20_000), name: "Big" })),
  ),
  frames: fc.array(frame, { maxLength: 3 }),
  reset: fc.constantFrom(false, false, false, true),
});
type Drawn = typeof anyRequest extends fc.Arbitrary<infer T> ? T : never;

/** A WebSocket session as a client would open one (so the frames reach the served socket), then frames of any kind. */
const socketSession: fc.Arbitrary<Drawn> = fc.record({ segment, frames: fc.array(frame, { minLength: 1, maxLength: 4 }), reset: fc.constantFrom(false, false, false, true) }).map(({ segment, frames, reset }) => ({
  server: "bridge" as const,
  method: "GET",
  path: `/v1/souls/${segment}/ws`,
  auth: "good" as const,
  upgrade: "good",
  huge: 0,
  extra: [],
  contentLength: undefined,
  body: "",
  frames,
  reset,
}));

const request = fc.oneof(anyRequest, socketSession);

function render(r: Drawn): (string | Buffer)[] {
  const auth = { good: `Bearer ${TOKEN}`, bad: "Bearer nope", none: undefined, weird: "Bearer \u0001\u0002" }[r.auth];
  // A loopback name: the debugger answers nothing else.
  const lines = [`${r.method} ${r.path} HTTP/1.1`, "Host: 127.0.0.1"];
  if (auth !== undefined) lines.push(`Authorization: ${auth}`);
  if (r.upgrade !== "none") lines.push("Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13", `Sec-WebSocket-Key: ${r.upgrade === "good" ? WS_KEY : "nope"}`);
  if (r.huge > 0) lines.push(`X-Huge: ${"h".repeat(r.huge)}`);
  for (const [name, value] of r.extra) lines.push(`${name}: ${value}`);
  if (r.contentLength !== undefined) lines.push(`Content-Length: ${r.contentLength}`);
  else if (r.body) lines.push(`Content-Length: ${Buffer.byteLength(r.body)}`);
  return [`${lines.join("\r\n")}\r\n\r\n${r.body}`, ...r.frames];
}

// ---- the checks ------------------------------------------------------------------------

/** Posts a perception and waits for its answer on the speech stream. */
async function answered(soul: string, content: string): Promise<string> {
  const headers = { Authorization: `Bearer ${TOKEN}` };
  const sse = await openSse(`${base}/v1/souls/${soul}/speech`, headers);
  try {
    const res = await fetch(`${base}/v1/souls/${soul}/perceptions`, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify({ content, name: "Ada" }) });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const events = await sse.until((es) => es.some((e) => e.event === "final" && JSON.parse(e.data).perception === id), 20_000);
    return JSON.parse(events.find((e) => e.event === "final" && JSON.parse(e.data).perception === id)!.data).text as string;
  } finally {
    sse.close();
  }
}

describe("a node under hostile HTTP", () => {
  it("survives the known killers: a malformed escape in a WebSocket path, an unreadable target, clients resetting mid-upgrade, broken frames", async () => {
    expect(await exchange([upgradeHead("/v1/souls/%E0%A4%A/ws")])).toMatch(/^HTTP\/1\.1 400 /);
    expect(await exchange([`GET /v1/souls/%E0%A4%A/speech HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`])).toMatch(/^HTTP\/1\.1 400 /);
    expect(await exchange([upgradeHead("http://[bad/")])).toMatch(/^HTTP\/1\.1 400 /);
    await exchange([upgradeHead("/v1/souls/echo/ws", "Bearer nope")], 20, true);
    await exchange([upgradeHead("/v1/souls/echo/ws")], 20, true);
    expect(await exchange([upgradeHead("/v1/souls/echo/ws"), wsFrame(1, Buffer.from("{}"), { masked: false }), randomBytes(32)])).toMatch(/^HTTP\/1\.1 101 /);
    expect(await exchange([upgradeHead("/v1/souls/echo/ws"), wsFrame(1, Buffer.alloc(9000, 0x61))])).toMatch(/^HTTP\/1\.1 101 /);
    // Node answers 431 and closes at once, while the rest of the head is still unread: the client may see the reset first.
    expect(["HTTP/1.1 431", ""]).toContain((await exchange([`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Huge: ${"h".repeat(70_000)}\r\n\r\n`])).slice(0, 12));
    expect(alive(), node.output()).toBe(true);
    expect(await answered("echo", "still here")).toBe("echo: still here");
  });

  it("fuzz: whatever method, path, headers, body and frames a client sends to any of its servers (bridge, debugger, metrics), the process lives and a perception is answered", async () => {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        await exchange(render(r), 60, r.reset, ports[r.server]);
        expect(alive(), node.output()).toBe(true);
      }),
      { numRuns: 120 },
    );
    expect(await answered("echo", "after the fuzz")).toBe("echo: after the fuzz");
    expect(node.output()).not.toMatch(/no actor owns|uncaught exception|unhandled rejection/);
  }, 120_000);

  it("serves while slow clients hold connections: headers sent a byte at a time, a stream and a WebSocket never read", async () => {
    const slow: Socket[] = [];
    for (let i = 0; i < 20; i++) {
      const s = connect(port, "127.0.0.1");
      s.on("error", () => undefined);
      s.write("GET /v1/souls/echo/speech HTTP/1.1\r\nHost: x\r\nAuthor");
      slow.push(s);
    }
    const stalled = connect(port, "127.0.0.1");
    stalled.on("error", () => undefined);
    stalled.write(`GET /v1/souls/echo/speech HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    stalled.pause();
    const unread = connect(port, "127.0.0.1");
    unread.on("error", () => undefined);
    unread.write(upgradeHead("/v1/souls/echo/ws"));
    unread.pause();
    slow.push(stalled, unread);
    try {
      expect(await answered("echo", "past the slow ones")).toBe("echo: past the slow ones");
      expect(alive()).toBe(true);
    } finally {
      for (const s of slow) s.destroy();
    }
  });

  it("restarts a soul whose process leaves an exception or a rejection nothing catches; the node and its other souls keep serving", async () => {
    for (const [content, how] of [
      ["throw later", "uncaught exception"],
      ["reject later", "unhandled rejection"],
    ] as const) {
      expect(await answered("fragile", content)).toBe(`fragile: ${content}`);
      await node.waitFor(new RegExp(`${how} in soul fragile: Error: fragile: `), 10_000);
      expect(alive(), node.output()).toBe(true);
      expect(await answered("echo", `meanwhile (${how})`)).toBe(`echo: meanwhile (${how})`);
      expect(await answered("fragile", `after the ${how}`)).toBe(`fragile: after the ${how}`);
    }
    expect(node.output()).toMatch(/soul fragile failed \(uncaught exception\): fragile: thrown from a timer nobody catches/);
    expect(node.output()).toMatch(/soul fragile failed \(unhandled rejection\): fragile: a rejection nobody handles/);
    expect(node.output()).not.toMatch(/no actor owns/);
  });
});
