/**
 * A stand-in debugger server: the real page (through loadPageAssets) and the JSON API of
 * docs/DEBUGGER.md answered from made-up data (debuggerFixtureData.ts), with an events
 * stream that sends a `soul.turn` (the main soul takes a turn) and a `fleet` event every
 * second. For the page's browser tests, and to look at the page by hand:
 *
 *   npx tsx test/support/debuggerFixtureServer.ts [port] [token]
 *
 * With a token, every /api/ request needs `Authorization: Bearer <token>`; the page's own
 * files (/, /app.css, /app.js) hold no data and are served without it, so the page can load
 * and then take `?token=`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { pathToFileURL } from "node:url";
import { loadPageAssets } from "../../runtime/inspect/debugger/pageAssets.ts";
import type { FleetEntry, Turn } from "../../runtime/inspect/debugger/page/types.ts";
import { countTransitions, createDebuggerFixtureData, MAIN_SOUL, plainDetail, plainTurns, PROCESSES, type DebuggerFixtureData } from "./debuggerFixtureData.ts";

export interface DebuggerFixtureOptions {
  port?: number;
  /** When set, the API needs it as a bearer token. */
  token?: string;
  /** Milliseconds between live ticks (default 1000; 0: no ticks, events only through emit). */
  tickMs?: number;
}

export interface DebuggerFixture {
  url: string;
  data: DebuggerFixtureData;
  /** Sends one event to every open events stream. */
  emit(type: string, data: unknown): void;
  /** Changes a soul's fleet entry and sends the `fleet` event. */
  updateSoul(id: string, change: Partial<FleetEntry>): FleetEntry;
  /** Runs one live tick now (what the timer does every `tickMs`). */
  tick(): void;
  /** Requests seen, as `METHOD path authorization`, for tests of the token. */
  requests: string[];
  stop(): Promise<void>;
}

type Reply = (status: number, body: unknown) => void;

/** The real server's policy for the page (runtime/inspect/debugger/DebuggerServer.ts): its own script only. */
const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function turnsOf(data: DebuggerFixtureData, soul: FleetEntry): Turn[] {
  let turns = data.turns.get(soul.id);
  if (!turns) data.turns.set(soul.id, (turns = plainTurns(soul, Date.now())));
  return turns;
}

function turnsPage(data: DebuggerFixtureData, soul: FleetEntry, query: URLSearchParams) {
  const before = query.has("before") ? Number(query.get("before")) : Infinity;
  const limit = Math.min(100, Math.max(1, Number(query.get("limit") ?? 20) || 20));
  const older = turnsOf(data, soul).filter((t) => t.turn < before);
  const page = older.slice(0, limit);
  const rest = older.slice(limit);
  const newest = page[0]?.turn ?? 0;
  const oldest = page.at(-1)?.turn ?? 0;
  const reverts = (data.reverts.get(soul.id) ?? []).filter((r) => r.turn >= oldest && (before === Infinity || r.turn <= newest));
  const failed = before === Infinity ? (data.failed.get(soul.id) ?? []) : [];
  return { soulId: soul.id, turns: page, reverts, failed, ...(rest.length && page.length ? { next: oldest } : {}) };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "null");
}

async function revert(data: DebuggerFixtureData, soul: FleetEntry, req: IncomingMessage, reply: Reply, emit: DebuggerFixture["emit"]): Promise<void> {
  let body: { turn?: unknown; by?: unknown };
  try {
    body = ((await readBody(req)) ?? {}) as typeof body;
  } catch {
    return reply(400, { error: "the body is not JSON" });
  }
  const turns = turnsOf(data, soul);
  if (typeof body.turn !== "number" || !turns.some((t) => t.turn === body.turn)) return reply(404, { error: `no turn ${String(body.turn)} of ${soul.id} is kept` });
  const entry = { turn: turns[0].turn, toTurn: body.turn, by: typeof body.by === "string" ? body.by : (req.socket.remoteAddress ?? "?"), at: Date.now() };
  data.reverts.set(soul.id, [...(data.reverts.get(soul.id) ?? []), entry]);
  reply(200, { soulId: soul.id, revert: entry });
  emit("revert", { soulId: soul.id, revert: entry });
}

async function api(data: DebuggerFixtureData, req: IncomingMessage, url: URL, reply: Reply, emit: DebuggerFixture["emit"]): Promise<void> {
  if (url.pathname === "/api/souls" && req.method === "GET") return reply(200, { cluster: data.cluster, nodes: data.nodes, souls: data.souls });
  const match = /^\/api\/souls\/([^/]+)(\/turns|\/revert)?$/.exec(url.pathname);
  const soul = match ? data.souls.find((s) => s.id === decodeURIComponent(match[1])) : undefined;
  if (!match || !soul) return reply(404, { error: match ? `no soul '${decodeURIComponent(match[1])}'` : `no ${url.pathname}` });
  if (match[2] === "/turns" && req.method === "GET") return reply(200, turnsPage(data, soul, url.searchParams));
  if (match[2] === "/revert" && req.method === "POST") return revert(data, soul, req, reply, emit);
  if (!match[2] && req.method === "GET") {
    const detail = data.details.get(soul.id) ?? plainDetail(soul);
    return reply(200, { soul, ...detail, transitions: countTransitions(turnsOf(data, soul)) });
  }
  reply(404, { error: `no ${req.method} ${url.pathname}` });
}

/** The main soul's next turn, as a live node would commit it. */
function liveTurn(data: DebuggerFixtureData, tick: number): Turn {
  const turns = turnsOf(data, data.souls[0]);
  const last = turns[0];
  const n = last.turn + 1;
  const to = tick % 4 === 3 ? "thinking" : "talking";
  const said = `Live message ${tick}: Marta is still typing…`;
  const reply = `Live reply ${tick}.`;
  const [core, ...dialog] = last.memory.after;
  return {
    turn: n, turnId: `${MAIN_SOUL}:${n}`, kind: "turn", at: Date.now(), durationMs: 640,
    perception: { id: `01JLIVE${tick}`, kind: "perception", action: "said", content: said, name: "Marta" },
    process: { from: last.process.to, to, path: [to] },
    memory: { before: last.memory.after, after: [core, ...[...dialog, { role: "user", region: "default", content: said, name: "Marta" }, { role: "assistant", region: "default", content: reply }].slice(-10)] },
    steps: [{ step: "externalDialog", model: "offline:default", prompt: [{ role: "user", content: said }], raw: reply, value: reply, tokens: { input: 210, output: 5 }, latencyMs: 12 }],
    proposals: [{ id: `${MAIN_SOUL}:${n}:0`, kind: "speak", content: reply, verdict: "passed" }],
    whispers: [], kv: [], answered: true,
    state: { soulMemory: { mood: "curious" }, processMemory: {}, schedules: [] },
  };
}

/** One live tick: the main soul takes a turn (`soul.turn`, `fleet`), another soul's entry changes (`fleet`). */
function tickOnce(fixture: DebuggerFixture, tick: number): void {
  const { data } = fixture;
  const turn = liveTurn(data, tick);
  turnsOf(data, data.souls[0]).unshift(turn);
  const main = data.souls[0];
  fixture.updateSoul(main.id, { turns: main.turns + 1, lastTurnAt: turn.at, process: turn.process.to });
  fixture.emit("soul.turn", { soulId: MAIN_SOUL, type: "soul.turn", data: { turn: turn.turn, process: turn.process.to }, at: turn.at, id: `env-${tick}` });
  const other = data.souls[1 + (tick % (data.souls.length - 1))];
  fixture.updateSoul(other.id, { turns: other.turns + 1, lastTurnAt: Date.now(), process: PROCESSES[tick % PROCESSES.length] });
}

function sse(res: ServerResponse, streams: Set<ServerResponse>): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.write(": connected\n\n");
  streams.add(res);
  const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  res.on("close", () => {
    clearInterval(keepAlive);
    streams.delete(res);
  });
}

export async function startDebuggerFixture(options: DebuggerFixtureOptions = {}): Promise<DebuggerFixture> {
  const assets = await loadPageAssets();
  const data = createDebuggerFixtureData();
  const streams = new Set<ServerResponse>();
  const requests: string[] = [];
  const emit = (type: string, body: unknown) => {
    for (const res of streams) res.write(`event: ${type}\ndata: ${JSON.stringify(body)}\n\n`);
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://fixture");
    requests.push(`${req.method} ${url.pathname} ${req.headers.authorization ?? "-"}`);
    const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) => res.writeHead(status, { "content-type": type, "cache-control": "no-store", ...headers }).end(body);
    const reply: Reply = (status, body) => send(status, "application/json; charset=utf-8", JSON.stringify(body));
    if (url.pathname === "/" || url.pathname === "/index.html") return send(200, "text/html; charset=utf-8", assets.html, { "content-security-policy": PAGE_CSP });
    if (url.pathname === "/app.css") return send(200, "text/css; charset=utf-8", assets.css);
    if (url.pathname === "/app.js") return send(200, "text/javascript; charset=utf-8", assets.js);
    if (!url.pathname.startsWith("/api/")) return reply(404, { error: `no ${url.pathname}` });
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) return reply(401, { error: "missing or wrong token" });
    if (url.pathname === "/api/events") return sse(res, streams);
    api(data, req, url, reply, emit).catch((err: Error) => reply(500, { error: err.message }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  let ticks = 0;
  const fixture: DebuggerFixture = {
    url: `http://127.0.0.1:${port}/`,
    data, emit, requests,
    tick: () => tickOnce(fixture, ++ticks),
    updateSoul(id, change) {
      const index = data.souls.findIndex((s) => s.id === id);
      if (index < 0) throw new Error(`no soul ${id} in the fixture`);
      const soul = Object.assign(data.souls[index], change);
      emit("fleet", { soulId: id, soul });
      return soul;
    },
    stop: async () => {
      stopTicks();
      for (const res of streams) res.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const tickMs = options.tickMs ?? 1000;
  const timer = tickMs > 0 ? setInterval(() => fixture.tick(), tickMs) : undefined;
  const stopTicks = () => clearInterval(timer);
  return fixture;
}

// `npx tsx test/support/debuggerFixtureServer.ts [port] [token]`: serve until Ctrl-C.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [port, token] = process.argv.slice(2);
  const fixture = await startDebuggerFixture({ port: port ? Number(port) : 4500, ...(token ? { token } : {}) });
  console.log(`debugger fixture: ${fixture.url}${token ? `?token=${token}` : ""}`);
  process.on("SIGINT", () => void fixture.stop().then(() => process.exit(0)));
}
