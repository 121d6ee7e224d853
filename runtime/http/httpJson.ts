/**
 * The small pieces every ensoul HTTP endpoint shares (the whisper endpoint, the HTTP bridge):
 * a bearer check that takes the same time whatever the caller sent, a JSON reply, and a body
 * read that stops at a limit instead of buffering whatever a client streams.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";

const sha256 = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/** The digest a bearer token is compared against (`bearerMatches`). */
export function bearerDigest(token: string): Buffer {
  return sha256(token);
}

/** Digests have one length, so the compare is constant-time whatever the caller sent. */
export function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
  const given = sha256(match ? match[1] : "");
  return timingSafeEqual(given, expected) && match !== null;
}

/**
 * How long, and how many more bytes, the rest of a request body is read and thrown away after
 * a reply that closes the connection: closed while the client still sends, the connection is
 * reset, and a client that reads only once it has sent (curl, many others) never sees the reply.
 */
export const LINGER_MS = 2_000;
export const LINGER_BYTES = 64 * 1024 * 1024;

/** Replies with JSON; `close` when the rest of an unread body is not worth reading (it is discarded for a short while, then the connection closes). */
export function sendJson(res: ServerResponse, status: number, body: unknown, close = false, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(text)),
    "Cache-Control": "no-store",
    ...headers,
    ...(close ? { Connection: "close" } : {}),
  });
  const req = res.req as IncomingMessage | undefined;
  if (close && req && !req.complete) return endAfterBody(req, res, text);
  res.end(text);
}

/**
 * The whole reply goes now; the end of the response (after which Node closes the connection)
 * waits until the client has sent its body, LINGER_BYTES more of it, or LINGER_MS.
 */
function endAfterBody(req: IncomingMessage, res: ServerResponse, text: string): void {
  res.write(text);
  let discarded = 0;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    req.off("data", count);
    res.end();
  };
  const count = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_BYTES) end();
  };
  const timer = setTimeout(end, LINGER_MS);
  req.on("data", count);
  req.once("end", end);
  req.once("close", end);
  req.once("error", end);
  req.resume();
}

export type Body = { ok: true; data: Buffer } | { ok: false; tooLarge: true };

/** Reads the body up to `maxBytes`; a larger one is refused without being buffered. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Body> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve({ ok: false, tooLarge: true });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    req.on("data", (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > maxBytes) {
        settled = true;
        resolve({ ok: false, tooLarge: true });
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (settled) return;
      settled = true;
      resolve({ ok: true, data: Buffer.concat(chunks) });
    });
    req.on("error", (error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
  });
}

/**
 * Reads a JSON body of at most `maxBytes` and checks it with `schema`. On any failure the
 * reply is sent here (413, 400 with what is wrong) and the result is undefined.
 */
export async function readJsonBody<S extends z.ZodType>(req: IncomingMessage, res: ServerResponse, maxBytes: number, schema: S, what: string): Promise<z.infer<S> | undefined> {
  const body = await readBody(req, maxBytes);
  if (!body.ok) return void sendJson(res, 413, { error: `body too large; the limit is ${maxBytes} bytes` }, true);
  let json: unknown;
  try {
    json = JSON.parse(body.data.toString("utf8"));
  } catch {
    return void sendJson(res, 400, { error: "body is not valid JSON" });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return void sendJson(res, 400, { error: `malformed ${what}: ${z.prettifyError(parsed.error).slice(0, 500)}` });
  return parsed.data;
}
