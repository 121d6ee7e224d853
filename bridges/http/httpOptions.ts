/**
 * The HTTP bridge's `options` in the cluster config, checked with a clear error:
 *
 *   - type: http
 *     soul: claudius
 *     options: { port: 3200, host: 127.0.0.1, maxBodyBytes: 1048576, rateLimit: { perMinute: 600, burst: 60 } }
 */
import { z } from "zod";
import { bridgePolicySchema } from "../core/index.ts";

export const httpOptionsSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-]+$/).optional(),
  port: z.number().int().min(0).max(65_535).default(3200),
  /** Loopback unless said otherwise: exposing a soul beyond the machine is a deliberate choice. */
  host: z.string().min(1).default("127.0.0.1"),
  maxBodyBytes: z.number().int().min(1_024).max(16 * 1024 * 1024).default(1024 * 1024),
  /** Requests per client address: `perMinute` on average, `burst` at once. */
  rateLimit: z.strictObject({ perMinute: z.number().int().min(1).default(600), burst: z.number().int().min(1).default(60) }).default({ perMinute: 600, burst: 60 }),
  policy: bridgePolicySchema.optional(),
});

export type HttpBridgeOptions = z.infer<typeof httpOptionsSchema>;

export function parseHttpOptions(options: unknown): HttpBridgeOptions {
  const parsed = httpOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) throw new Error(`http bridge options: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
