/**
 * The HTTP side of the fake Web API: `POST /api/<method>` as @slack/web-api's WebClient sends
 * it (node_modules/@slack/web-api/dist/WebClient.js: `makeRequest` / `serializeBody` —
 * application/x-www-form-urlencoded, objects such as `metadata` and `blocks` flattened to JSON
 * strings, the token in `Authorization: Bearer`), JSON bodies too, and Slack's answers: HTTP 200
 * with `{ ok: false, error }` for every API error, HTTP 429 with `Retry-After` (seconds) when
 * rate limited — which WebClient waits out and retries unless `rejectRateLimitedCalls`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { METHODS, str, type ApiResult, type Args, type MethodContext } from "./methods.ts";
import type { SlackState } from "./state.ts";

/** Form fields WebClient sends as JSON strings; the fake parses them back. */
const JSON_FIELDS = new Set(["metadata", "blocks", "attachments"]);

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseJsonField(key: string, value: unknown): unknown {
  if (!JSON_FIELDS.has(key) || typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** The call's arguments from the query string and the body, whichever encoding it came in. */
export async function parseArgs(req: IncomingMessage, url: URL): Promise<Args> {
  const raw: Args = Object.fromEntries(url.searchParams);
  const body = await readBody(req);
  const type = String(req.headers["content-type"] ?? "");
  if (body && type.includes("application/json")) Object.assign(raw, JSON.parse(body) as Args);
  else if (body) Object.assign(raw, Object.fromEntries(new URLSearchParams(body)));
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, parseJsonField(k, v)]));
}

function tokenOf(req: IncomingMessage, args: Args): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith("Bearer ") && header.length > 7) return header.slice(7);
  return str(args["token"]);
}

/** Slack's answer for a token that is missing, unknown, or the wrong kind for the method. */
function authError(state: SlackState, kind: "bot" | "app", token: string | undefined): string | undefined {
  const { botToken, appToken } = state.identity;
  if (!token) return "not_authed";
  if (token !== botToken && token !== appToken) return "invalid_auth";
  if ((kind === "app") !== (token === appToken)) return "not_allowed_token_type";
  return undefined;
}

function send(res: ServerResponse, status: number, body: ApiResult, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}

/** Runs one call: unknown method, queued fault, auth, then the method itself. */
function answer(method: string, args: Args, token: string | undefined, ctx: MethodContext): { status: number; body: ApiResult; headers?: Record<string, string> } {
  const entry = METHODS[method];
  if (!entry) return { status: 200, body: { ok: false, error: "unknown_method" } };
  const fault = ctx.state.takeFault(method);
  if (fault?.kind === "ratelimit") {
    return { status: 429, body: { ok: false, error: "ratelimited" }, headers: { "retry-after": String(fault.retryAfterSeconds) } };
  }
  if (fault?.kind === "fail") return { status: 200, body: { ok: false, error: fault.error } };
  const error = authError(ctx.state, entry.token, token);
  if (error) return { status: 200, body: { ok: false, error } };
  return { status: 200, body: entry.run(args, ctx) };
}

/** Handles `/api/<method>`; false when the path is not the API's. */
export async function handleApiRequest(req: IncomingMessage, res: ServerResponse, ctx: MethodContext): Promise<boolean> {
  const url = new URL(req.url ?? "/", "http://fake.slack");
  const match = /^\/api\/([\w.]+)$/.exec(url.pathname);
  if (!match) return false;
  let args: Args;
  try {
    args = await parseArgs(req, url);
  } catch {
    send(res, 200, { ok: false, error: "invalid_json" });
    return true;
  }
  const token = tokenOf(req, args);
  delete args["token"];
  const { status, body, headers } = answer(match[1], args, token, ctx);
  ctx.state.logCall({ method: match[1], args, time: Date.now(), status, ok: body.ok, ...(body.ok ? {} : { error: body.error }) });
  send(res, status, body, headers);
  return true;
}
