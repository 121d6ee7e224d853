/**
 * A turn that failed, as it is told where the person is: `ensoul chat`, `demo`, `up`'s console,
 * the log, `ensoul memory`, an HTTP client's stream, a platform bridge's log. Its reason is one
 * line: the error's message (its kind first when it is one of JavaScript's own, a TypeError: a
 * bug, not a refusal), and for an error thrown in soul code, where in the soul's own source
 * (soulSource.ts). Every place that tells it reads it with the functions here, so they all say
 * the same.
 *
 * On the wire it is the `soul.error` event of phase `process` on the soul's events subject
 * (docs/PROTOCOL.md 12.4): `causation` the perception that got no answer, `data.message` and
 * `data.at`.
 */
import { redactSecrets } from "../../runtime/log/index.ts";
import { isKind, type Envelope } from "../../runtime/bus/index.ts";
import { soulSourceOf } from "./soulSource.ts";

export interface TurnFailure {
  message: string;
  /** `<file>:<line>:<column>` in the soul's own source, for an error its code threw. */
  at?: string;
}

/** A failed turn as a client of the events subject sees it. */
export interface FailedTurn extends TurnFailure {
  soulId: string;
  /** The perception that got no answer. */
  perceptionId: string;
  process?: string;
}

/** JavaScript's own kinds of error, named before the message: each says the code has a bug. */
const NAMED_KINDS = new Set(["TypeError", "ReferenceError", "RangeError", "SyntaxError", "EvalError", "URIError"]);

export function turnFailureOf(error: unknown): TurnFailure {
  const err = error as { name?: unknown; message?: unknown } | null;
  const text = typeof err?.message === "string" ? err.message : String(error);
  const message = typeof err?.name === "string" && NAMED_KINDS.has(err.name) ? `${err.name}: ${text}` : text;
  const at = soulSourceOf(error);
  return at !== undefined ? { message, at } : { message };
}

/** The reason in one line, no credential in it: `<message> at <file>:<line>:<column>`. */
export function failureReason(failure: TurnFailure): string {
  const line = redactSecrets(failure.message).replace(/\s*\n\s*/g, " ").trim();
  return failure.at !== undefined ? `${line} at ${failure.at}` : line;
}

/** What the person talking to the soul is shown: `<speaker> could not answer: <reason>`. */
export function failedTurnLine(speaker: string, failure: TurnFailure): string {
  return `${speaker} could not answer: ${failureReason(failure)}`;
}

/** The failed turn an envelope of the soul's events subject tells, if it tells one. */
export function failedTurnOf(env: Envelope): FailedTurn | undefined {
  if (!isKind(env, "event") || env.causation === undefined) return undefined;
  const data = (env.body.data ?? {}) as Record<string, unknown>;
  // The soul's own event (`from` the soul): a node's or a bridge's events about it are not its turns.
  if (env.body.type !== "soul.error" || data.phase !== "process" || env.from !== env.to) return undefined;
  return {
    soulId: env.from,
    perceptionId: env.causation,
    message: typeof data.message === "string" ? data.message : "error",
    ...(typeof data.at === "string" ? { at: data.at } : {}),
    ...(typeof data.process === "string" ? { process: data.process } : {}),
  };
}
