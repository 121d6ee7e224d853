/**
 * What a chat bridge keeps, and for how long, as config (`options.ledger`, `options.streams` of
 * a Slack or Discord bridge), so a node up for months holds what its traffic of the last
 * `keepMs` needs and no more:
 *
 *   - type: discord
 *     soul: claudius
 *     options: { ledger: { keepMs: 604800000, pruneEveryMs: 3600000 }, streams: { max: 1000, idleMs: 600000 } }
 *
 * - `ledger.keepMs` (default 7 days, the cluster stream's max age): ledger entries (messages
 *   taken, threads joined, posts, pending replies) older than this are pruned; a soul's answer
 *   must come within it, or it finds no conversation to go to.
 * - `ledger.pruneEveryMs` (default an hour): how often a running bridge prunes (and once at start).
 * - `streams.max` (default 1,000): streamed replies followed at once; past it the one idle
 *   longest is let go (its draft stays as shown; its final still edits it). Also the thinking
 *   indicators shown at once (past it, the oldest is taken down).
 * - `streams.idleMs` (default 10 minutes): a stream with no new piece for this long is let go (a
 *   streamed proposal a gate intercepted gets no final).
 */
import { z } from "zod";
import { DEFAULT_LEDGER_KEEP_MS, DEFAULT_LEDGER_PRUNE_EVERY_MS } from "./BridgeLedger.ts";

export const DEFAULT_MAX_STREAMS = 1_000;
export const DEFAULT_STREAM_IDLE_MS = 600_000;

export const ledgerBoundsSchema = z.strictObject({
  keepMs: z.number().int().min(60_000).default(DEFAULT_LEDGER_KEEP_MS),
  pruneEveryMs: z.number().int().min(1_000).default(DEFAULT_LEDGER_PRUNE_EVERY_MS),
});

export const streamBoundsSchema = z.strictObject({
  max: z.number().int().min(1).default(DEFAULT_MAX_STREAMS),
  idleMs: z.number().int().min(1_000).default(DEFAULT_STREAM_IDLE_MS),
});

export type LedgerBounds = z.infer<typeof ledgerBoundsSchema>;
export type StreamBounds = z.infer<typeof streamBoundsSchema>;
