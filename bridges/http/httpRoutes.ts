/**
 * The HTTP bridge's perception endpoint, `POST /v1/souls/:id/perceptions` (docs/HTTP.md is its
 * contract), and what it shares with the WebSocket's perception frames: the body's shape, the
 * perception's id from the Idempotency-Key, and the answer to a publish. A perception is
 * published (202 with its id), refused with nothing kept (4xx), or not confirmed (503), when a
 * retry with the same Idempotency-Key is answered once.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { nextUlid } from "../../runtime/bus/index.ts";
import { readJsonBody, sendJson } from "../../runtime/http/index.ts";
import { platformPerceptionId, type BridgeRuntime, type PlatformMessage, type ReceiveResult } from "../core/index.ts";
import type { EphemeralFeed } from "./EphemeralFeed.ts";
import type { SpeechLog } from "./SpeechLog.ts";

export interface HttpSoulRoute {
  soul: string;
  runtime: BridgeRuntime;
  log: SpeechLog;
  maxBodyBytes: number;
  /** The soul's ephemeral events, forwarded live to every client (docs/HTTP.md). */
  ephemeral?: EphemeralFeed;
}

// eslint-disable-next-line no-control-regex
const identifier = (max: number) => z.string().min(1).max(max).regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, "must not contain control characters");

export const perceptionBodySchema = z.object({
  content: z.string(),
  name: z.string().min(1).max(256),
  action: identifier(128).default("said"),
});

export const IDEMPOTENCY_KEY = identifier(256);

/** The perception a request (or a WebSocket frame) makes; its id from the Idempotency-Key when there is one. */
export function messageOf(soul: string, body: z.infer<typeof perceptionBodySchema>, key: string | undefined, channel: string): PlatformMessage {
  const id = key !== undefined ? platformPerceptionId("http", soul, key) : `http:${nextUlid()}`;
  return { platform: "http", id, channel, messageId: id, direct: true, userId: body.name, userName: body.name, text: body.content, action: body.action, mentioned: true, fromBot: false };
}

export type Accepted = { ok: true; result: ReceiveResult } | { ok: false; status: number; error: string };

/** What the client is told when a publish was not confirmed: it may have landed, so only a retry under the same id is safe. */
export const NOT_CONFIRMED = "the perception was not confirmed stored on the bus; send it again with the same Idempotency-Key (it is answered once)";

export async function accept(route: HttpSoulRoute, message: PlatformMessage): Promise<Accepted> {
  let result: ReceiveResult;
  try {
    result = await route.runtime.receive(message);
  } catch (err) {
    // Not published again behind the caller's back at the next start; kept for the answer, should it have landed.
    await route.runtime.retract(message.id).catch((failed: unknown) => route.runtime.report(failed, `leaving ${message.id} to its caller's retry`));
    const why = err instanceof Error ? err.message : String(err);
    // An envelope the bus refuses for its size is the client's to fix; anything else is ours, for now.
    if (/exceeds|too large|max.?payload/i.test(why)) return { ok: false, status: 413, error: `the perception is too large: ${why}` };
    if (/invalid perception envelope/.test(why)) return { ok: false, status: 400, error: why };
    return { ok: false, status: 503, error: NOT_CONFIRMED };
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
