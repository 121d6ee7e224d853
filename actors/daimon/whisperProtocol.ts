/**
 * The whisper protocol over HTTP, as existing daimon services speak it (the Claudius /
 * Kothar daemon): `POST /api/whisper` with a bearer token, a JSON body naming who asks and a
 * little of its state, and a JSON answer with the whisper. Both ends live here: ensoul can
 * serve it (whisperHttp.ts) and call it (httpDaimon.ts), so daimons plug in either way.
 *
 *   request   { "source": "claudius",
 *               "context": { "soul_state": { "emotionalState": "curious", ... },
 *                            "recent_monologue": "...", "interaction_count": 3 } }
 *   response  { "whisper": "They want assurance, not answers.", "influence": 0.5 }
 *
 * `influence` is ensoul's addition, a number from 0 (a passing impression) to 1 (the daimon
 * insists): how much weight the daimon would give its own whisper. Older clients ignore it;
 * an empty `whisper` means the daimon has nothing to say this time.
 */
import { z } from "zod";

export const WHISPER_PATH = "/api/whisper";
/** Larger bodies are refused with 413 before they are parsed. */
export const WHISPER_MAX_BODY_BYTES = 64 * 1024;
/** Influence when the daimon does not give one. */
export const DEFAULT_INFLUENCE = 0.5;

const stateValue = z.union([z.string().max(4000), z.number(), z.boolean(), z.null()]);

export const whisperRequestSchema = z.object({
  /** Who asks: the soul the whisper is for. */
  source: z.string().min(1).max(256),
  context: z.object({
    /** The asking soul's state: key/value pairs (the reference sends emotionalState, currentTopic, ...) or plain text. */
    soul_state: z.union([z.record(z.string().max(128), stateValue), z.string().max(8000)]),
    /** A recent thought or a few (text), the soul's inner voice. */
    recent_monologue: z.union([z.string().max(8000), z.array(z.string().max(8000)).max(64)]),
    /** How many interactions the soul has had in this conversation. */
    interaction_count: z.number().int().nonnegative(),
  }),
});

export type WhisperRequest = z.infer<typeof whisperRequestSchema>;

/** What a server may answer; `influence` as a number (ensoul) or a short label (other servers). */
export const whisperResponseSchema = z.object({
  whisper: z.string(),
  influence: z.union([z.number(), z.string().max(64)]).optional(),
});

export interface WhisperReply {
  whisper: string;
  /** 0..1, see the file comment. */
  influence: number;
}

/** A bearer token must be sendable as a header as it is: visible ASCII, no spaces. */
export function assertToken(token: unknown, who: string): string {
  if (typeof token !== "string" || !/^[\x21-\x7E]+$/.test(token)) {
    // Never echo the token, not even a bad one: it may be a real secret with a stray newline.
    throw new TypeError(`${who}: the token must be a non-empty string of visible ASCII characters without spaces`);
  }
  return token;
}
