/**
 * `GET /v1/souls/:id/ws`: perceptions in and the speech answering them out, on one WebSocket
 * (docs/HTTP.md 6). Bounded like every stream of the server: frames count against the client's
 * rate limit, the connection follows the speech of its most recent perceptions only, and a
 * client that stops reading is closed. A bad frame is answered and the connection stays; a
 * broken one (a protocol error, a frame over `maxBodyBytes`) closes it, and nothing is thrown.
 */
import type { WebSocket } from "ws";
import { z } from "zod";
import { accept, IDEMPOTENCY_KEY, messageOf, perceptionBodySchema, type HttpSoulRoute } from "./httpRoutes.ts";
import { RecentIds } from "./RecentIds.ts";
import { speechEventData } from "./SpeechLog.ts";
import type { StreamLimits } from "./StreamLimits.ts";

/** The perceptions a connection follows the speech of, at most: the oldest is let go first. */
export const FOLLOWED_PERCEPTIONS = 1_000;

const wsFrameSchema = z.object({ type: z.literal("perception"), idempotencyKey: IDEMPOTENCY_KEY.optional() }).and(perceptionBodySchema);

export interface SocketLimits {
  streams: StreamLimits;
  /** 0 when the client may send a perception now, else the milliseconds until it may (the rate limiter). */
  wait(): number;
}

type Send = (frame: unknown) => void;

/** One text frame: a perception published, or an error frame saying why not. */
async function perceptionFrame(raw: string, route: HttpSoulRoute, limits: SocketLimits, mine: RecentIds, send: Send): Promise<void> {
  const wait = limits.wait();
  if (wait > 0) return send({ type: "error", status: 429, error: `too many requests; retry in ${Math.ceil(wait / 1000)} s`, retryAfter: Math.ceil(wait / 1000) });
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
}

/** Serves an upgraded connection; `release` gives its place among the server's streams back when it closes. */
export function serveSocket(ws: WebSocket, route: HttpSoulRoute, limits: SocketLimits, release: () => void): void {
  const mine = new RecentIds(FOLLOWED_PERCEPTIONS);
  const send: Send = (frame) => {
    if (ws.readyState !== ws.OPEN) return;
    // A client this far behind would make the server hold everything for it.
    if (limits.streams.behind(ws.bufferedAmount)) return void ws.terminate();
    ws.send(JSON.stringify(frame));
  };
  const stop = route.log.listen((e) => {
    if (mine.has(e.perception)) send({ type: e.event, ...speechEventData(e) });
  });
  const stopEphemeral = route.ephemeral?.listen((e) => send({ type: "ephemeral", event: e.type, ...(e.data !== undefined ? { data: e.data } : {}) }));
  ws.on("close", () => {
    stop();
    stopEphemeral?.();
    release();
  });
  // A protocol error or a frame over maxPayload: ws closes the connection (1002, 1009); the client's fault, not the node's.
  ws.on("error", () => ws.terminate());
  ws.on("message", (data, isBinary) => {
    if (isBinary) return send({ type: "error", status: 400, error: "frames are JSON text, not binary" });
    perceptionFrame(data.toString(), route, limits, mine, send).catch((err: unknown) => route.runtime.report(err, "a WebSocket frame"));
  });
}
