/**
 * The debugger's JSON API (docs/DEBUGGER.md is its contract): the fleet from the heartbeats,
 * and a soul's detail, turns and revert from the node hosting it, by node control. A soul no
 * heartbeat names is a 404 without asking anyone; a node's own error keeps its meaning
 * (`not-found` 404, `bad-request` 400, `conflict` 409), and a node that does not answer is 502.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { isValidName, type Bus } from "../../bus/index.ts";
import { readJsonBody, sendJson } from "../../http/index.ts";
import { NodeRequestError, requestRevert, requestSoulDetail, requestTurns, type NodeRequestFailure, type TurnsRequest } from "../../node/index.ts";
import type { EventStream } from "./EventStream.ts";
import { fleetEntry, type FleetSoul, type FleetView } from "./FleetView.ts";

export interface ApiContext {
  bus: Bus;
  fleet: FleetView;
  events: EventStream;
}

/** A revert body is a turn number and a name: a few hundred bytes. */
const MAX_BODY_BYTES = 16 * 1024;
const MAX_TURNS_PAGE = 100;

const revertBodySchema = z.object({ turn: z.number().int().min(1), by: z.string().min(1).max(256).regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, "must not contain control characters").optional() });

const SOUL_PATH = /^\/api\/souls\/([^/]+)(?:\/(turns|revert))?$/;

const STATUS_OF: Record<NodeRequestFailure, number> = { "not-found": 404, "bad-request": 400, conflict: 409, "no-answer": 502, failed: 502 };

/** Answers one `/api/...` request; the caller has checked the token. */
export async function serveApi(req: IncomingMessage, res: ServerResponse, url: URL, ctx: ApiContext): Promise<void> {
  const path = url.pathname;
  if (path === "/api/souls") {
    if (!allow(req, res, "GET")) return;
    return sendJson(res, 200, ctx.fleet.snapshot());
  }
  if (path === "/api/events") {
    if (!allow(req, res, "GET")) return;
    if (!ctx.events.attach(req, res)) sendJson(res, 503, { error: "too many event streams open; close one and try again" });
    return;
  }
  const match = SOUL_PATH.exec(path);
  if (!match) return sendJson(res, 404, { error: "not found; see docs/DEBUGGER.md for the endpoints" });
  const verb = match[2];
  if (!allow(req, res, verb === "revert" ? "POST" : "GET")) return;
  const soul = soulOf(match[1] as string, ctx.fleet);
  if (!soul) return sendJson(res, 404, { error: `unknown soul '${safeId(match[1] as string)}' (no node of cluster '${ctx.fleet.snapshot().cluster}' reports it)` });
  try {
    if (verb === "turns") return await turns(res, url, soul, ctx);
    if (verb === "revert") return await revert(req, res, soul, ctx);
    return await detail(res, soul, ctx);
  } catch (err) {
    if (!(err instanceof NodeRequestError)) throw err;
    sendJson(res, STATUS_OF[err.code], { error: err.message });
  }
}

function allow(req: IncomingMessage, res: ServerResponse, method: "GET" | "POST"): boolean {
  if (req.method === method) return true;
  sendJson(res, 405, { error: `method not allowed; use ${method}` }, true, { Allow: method });
  return false;
}

function soulOf(raw: string, fleet: FleetView): FleetSoul | undefined {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  return isValidName(id) ? fleet.soul(id) : undefined;
}

/** An id from the path, for an error message: bounded, and only the characters an id may have. */
const safeId = (raw: string) => raw.slice(0, 128).replace(/[^A-Za-z0-9_%-]/g, "?");

async function detail(res: ServerResponse, soul: FleetSoul, ctx: ApiContext): Promise<void> {
  const reply = await requestSoulDetail(ctx.bus, soul.node, soul.id);
  const { soulId: _soulId, node, soul: now, ...rest } = reply;
  // The node's entry is newer than the last heartbeat; the fleet's fills what it leaves out.
  sendJson(res, 200, { soul: now && typeof now === "object" ? { ...soul, ...fleetEntry(now, node ?? soul.node) } : soul, ...rest });
}

/** `before` a turn number; `limit` 1..100, more is read as 100 (docs/DEBUGGER.md). */
function turnsQuery(url: URL): { ok: true; before?: number; limit?: number } | { ok: false; error: string } {
  const whole = (name: string): number | undefined | null => {
    const raw = url.searchParams.get(name);
    if (raw === null || raw === "") return undefined;
    return /^\d{1,15}$/.test(raw) && Number(raw) >= 1 ? Number(raw) : null;
  };
  const before = whole("before");
  const limit = whole("limit");
  if (before === null) return { ok: false, error: "before must be a turn number (a whole number from 1)" };
  if (limit === null) return { ok: false, error: `limit must be a whole number from 1 to ${MAX_TURNS_PAGE}` };
  return { ok: true, ...(before !== undefined ? { before } : {}), ...(limit !== undefined ? { limit: Math.min(limit, MAX_TURNS_PAGE) } : {}) };
}

async function turns(res: ServerResponse, url: URL, soul: FleetSoul, ctx: ApiContext): Promise<void> {
  const query = turnsQuery(url);
  if (!query.ok) return sendJson(res, 400, { error: query.error });
  const request: TurnsRequest = { soulId: soul.id, ...(query.before !== undefined ? { before: query.before } : {}), ...(query.limit !== undefined ? { limit: query.limit } : {}) };
  const { node: _node, ...reply } = await requestTurns(ctx.bus, soul.node, request);
  sendJson(res, 200, { ...reply, soulId: soul.id });
}

/** Who asked, when the body does not say: the client's address, without IPv4-mapped noise. */
const clientAddress = (req: IncomingMessage) => (req.socket.remoteAddress ?? "unknown").replace(/^::ffff:/, "");

async function revert(req: IncomingMessage, res: ServerResponse, soul: FleetSoul, ctx: ApiContext): Promise<void> {
  // A form on another site can post text/plain without asking first; JSON makes the browser ask (CORS), and we never allow it.
  const type = String(req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") return sendJson(res, 400, { error: "the body must be JSON, sent with Content-Type: application/json" }, true);
  const body = await readJsonBody(req, res, MAX_BODY_BYTES, revertBodySchema, "revert request: expected {\"turn\": <turn number>, \"by\"?: <name>}");
  if (body === undefined) return;
  const reply = await requestRevert(ctx.bus, soul.node, { soulId: soul.id, turn: body.turn, by: body.by ?? clientAddress(req) });
  const answer = { soulId: soul.id, revert: reply.revert };
  ctx.events.publish("revert", answer);
  sendJson(res, 200, answer);
}
