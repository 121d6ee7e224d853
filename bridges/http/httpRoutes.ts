/**
 * The HTTP bridge's endpoints for one soul (docs/HTTP.md is their contract):
 * `POST /v1/souls/:id/perceptions`, `GET /v1/souls/:id/speech` (Server-Sent Events, resumable
 * with Last-Event-ID) and the WebSocket `/v1/souls/:id/ws`. Every failure is a JSON error, and
 * a perception is either published (202 with its id) or not at all.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { WebSocket } from "ws";
import { z } from "zod";
import { nextUlid } from "../../runtime/bus/index.ts";
import { readJsonBody, sendJson } from "../../runtime/http/index.ts";
import { platformPerceptionId, type BridgeRuntime, type PlatformMessage, type ReceiveResult } from "../core/index.ts";
import type { EphemeralEvent, EphemeralFeed } from "./EphemeralFeed.ts";
import type { SpeechEvent, SpeechLog } from "./SpeechLog.ts";

export interface HttpSoulRoute {
  soul: string;
  runtime: BridgeRuntime;
  log: SpeechLog;
  maxBodyBytes: number;
  /** The soul's ephemeral events, forwarded live to every client (docs/HTTP.md). */
  ephemeral?: EphemeralFeed;
}

/** No `id:` line: an ephemeral event is not in the log, so it leaves the client's Last-Event-ID as it was. */
function ephemeralFrame(e: EphemeralEvent): string {
  return `event: ephemeral\ndata: ${JSON.stringify(e)}\n\n`;
}

// eslint-disable-next-line no-control-regex
const identifier = (max: number) => z.string().min(1).max(max).regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, "must not contain control characters");

export const perceptionBodySchema = z.object({
  content: z.string(),
  name: z.string().min(1).max(256),
  action: identifier(128).default("said"),
});

const IDEMPOTENCY_KEY = identifier(256);

/** The perception a request (or a WebSocket frame) makes; its id from the Idempotency-Key when there is one. */
function messageOf(soul: string, body: z.infer<typeof perceptionBodySchema>, key: string | undefined, channel: string): PlatformMessage {
  const id = key !== undefined ? platformPerceptionId("http", soul, key) : `http:${nextUlid()}`;
  return { platform: "http", id, channel, messageId: id, direct: true, userId: body.name, userName: body.name, text: body.content, action: body.action, mentioned: true, fromBot: false };
}

type Accepted = { ok: true; result: ReceiveResult } | { ok: false; status: number; error: string };

async function accept(route: HttpSoulRoute, message: PlatformMessage): Promise<Accepted> {
  let result: ReceiveResult;
  try {
    result = await route.runtime.receive(message);
  } catch (err) {
    await route.runtime.retract(message.id).catch(() => undefined);
    const why = err instanceof Error ? err.message : String(err);
    // An envelope the bus refuses for its size is the client's to fix; anything else is ours, for now.
    if (/exceeds|too large|max.?payload/i.test(why)) return { ok: false, status: 413, error: `the perception is too large: ${why}` };
    if (/invalid perception envelope/.test(why)) return { ok: false, status: 400, error: why };
    return { ok: false, status: 503, error: "the perception could not be published; nothing was kept, try again" };
  }
  if (result.status === "ignored") return { ok: false, status: 403, error: `ignored: ${result.reason}` };
  return { ok: true, result };
}

export async function postPerception(req: IncomingMessage, res: ServerResponse, route: HttpSoulRoute): Promise<void> {
  const keyHeader = req.headers["idempotency-key"];
  const key = Array.isArray(keyHeader) ? keyHeader[0] : keyHeader;
  if (key !== undefined && !IDEMPOTENCY_KEY.safeParse(key).success) return sendJson(res, 400, { error: "Idempotency-Key must be 1-256 characters without control characters" });
  const body = await readJsonBody(req, res, route.maxBodyBytes, perceptionBodySchema, "perception");
  if (body === undefined) return;
  const accepted = await accept(route, messageOf(route.soul, body, key, "http"));
  if (!accepted.ok) return sendJson(res, accepted.status, { error: accepted.error });
  sendJson(res, 202, { id: accepted.result.id, status: accepted.result.status === "duplicate" ? "duplicate" : "accepted" });
}

function sseFrame(e: SpeechEvent): string {
  const data = { id: e.id, perception: e.perception, text: e.text, ...(e.daimon !== undefined ? { daimon: e.daimon } : {}) };
  return `event: ${e.event}\nid: ${e.seq}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Server-Sent Events: what is logged after Last-Event-ID (or from now), then live. */
export function streamSpeech(req: IncomingMessage, res: ServerResponse, route: HttpSoulRoute): void {
  const lastHeader = req.headers["last-event-id"];
  const last = Number(Array.isArray(lastHeader) ? lastHeader[0] : lastHeader);
  res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", Connection: "keep-alive", "X-Accel-Buffering": "no" });
  res.write(": ensoul speech\n\n");
  let sent = Number.isSafeInteger(last) && last >= 0 ? last : route.log.last;
  for (const e of route.log.since(sent)) {
    res.write(sseFrame(e));
    sent = e.seq;
  }
  const stop = route.log.listen((e) => {
    if (e.seq <= sent) return;
    sent = e.seq;
    res.write(sseFrame(e));
  });
  const stopEphemeral = route.ephemeral?.listen((e) => res.write(ephemeralFrame(e)));
  const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  keepAlive.unref();
  res.on("close", () => {
    clearInterval(keepAlive);
    stop();
    stopEphemeral?.();
  });
}

const wsFrameSchema = z.object({ type: z.literal("perception"), idempotencyKey: IDEMPOTENCY_KEY.optional() }).and(perceptionBodySchema);

/** The WebSocket: perceptions in, `accepted` and the speech answering them out. */
export function serveSocket(ws: WebSocket, route: HttpSoulRoute): void {
  const mine = new Set<string>();
  const send = (frame: unknown) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(frame));
  const stop = route.log.listen((e) => {
    if (mine.has(e.perception)) send({ type: e.event, id: e.id, perception: e.perception, text: e.text, ...(e.daimon !== undefined ? { daimon: e.daimon } : {}) });
  });
  const stopEphemeral = route.ephemeral?.listen((e) => send({ type: "ephemeral", event: e.type, ...(e.data !== undefined ? { data: e.data } : {}) }));
  ws.on("close", () => {
    stop();
    stopEphemeral?.();
  });
  ws.on("message", (data, isBinary) => {
    void (async () => {
      const raw = isBinary ? undefined : data.toString();
      if (raw === undefined || Buffer.byteLength(raw) > route.maxBodyBytes) return send({ type: "error", status: 413, error: `frames are JSON text of at most ${route.maxBodyBytes} bytes` });
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        return send({ type: "error", status: 400, error: "frame is not valid JSON" });
      }
      const parsed = wsFrameSchema.safeParse(json);
      if (!parsed.success) return send({ type: "error", status: 400, error: `malformed frame: ${z.prettifyError(parsed.error).slice(0, 500)}` });
      const message = messageOf(route.soul, parsed.data, parsed.data.idempotencyKey, "ws");
      mine.add(message.id);
      const accepted = await accept(route, message);
      if (!accepted.ok) {
        mine.delete(message.id);
        return send({ type: "error", status: accepted.status, error: accepted.error });
      }
      send({ type: "accepted", id: accepted.result.id, status: accepted.result.status === "duplicate" ? "duplicate" : "accepted" });
    })().catch((err: unknown) => route.runtime.report(err, "a WebSocket frame"));
  });
}
