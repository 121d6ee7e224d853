/**
 * The HTTP bridge's `options` in the cluster config, checked with a clear error:
 *
 *   - type: http
 *     soul: claudius
 *     options: { port: 3200, host: 127.0.0.1, maxBodyBytes: 1048576, rateLimit: { perMinute: 600, burst: 60 } }
 *
 * Bridges sharing a port share one server: the first to open it sets what is the server's
 * (`rateLimit`, `maxConnections`, `maxStreams`); `maxBodyBytes` and `speechLog` are each soul's.
 */
import { z } from "zod";
import { bridgePolicySchema, ledgerBoundsSchema } from "../core/index.ts";
import { DEFAULT_SPEECH_LOG_KEEP } from "./SpeechLog.ts";

export const httpOptionsSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-]+$/).optional(),
  port: z.number().int().min(0).max(65_535).default(3200),
  /** Loopback unless said otherwise: exposing a soul beyond the machine is a deliberate choice. */
  host: z.string().min(1).default("127.0.0.1"),
  /** The largest request body, and the largest WebSocket frame. */
  maxBodyBytes: z.number().int().min(1_024).max(16 * 1024 * 1024).default(1024 * 1024),
  /** Requests and WebSocket perception frames per client address: `perMinute` on average, `burst` at once. */
  rateLimit: z.strictObject({ perMinute: z.number().int().min(1).default(600), burst: z.number().int().min(1).default(60) }).default({ perMinute: 600, burst: 60 }),
  /** TCP connections the server holds at once; more are closed as they come. */
  maxConnections: z.number().int().min(1).default(1_024),
  /** Speech streams (SSE clients and WebSockets) at once; more get 503. */
  maxStreams: z.number().int().min(1).default(256),
  /** The speech log: the last `keep` events are kept for `Last-Event-ID`. */
  speechLog: z.strictObject({ keep: z.number().int().min(100).default(DEFAULT_SPEECH_LOG_KEEP) }).default({ keep: DEFAULT_SPEECH_LOG_KEEP }),
  /** What the bridge's ledger keeps, and how often a running bridge prunes it (bridges/core/bridgeBounds.ts). */
  ledger: ledgerBoundsSchema.optional(),
  policy: bridgePolicySchema.optional(),
});

export type HttpBridgeOptions = z.infer<typeof httpOptionsSchema>;

export function parseHttpOptions(options: unknown): HttpBridgeOptions {
  const parsed = httpOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) throw new Error(`http bridge options: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
