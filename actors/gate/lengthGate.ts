import type { Proposal, ProposalKind } from "../vocabulary/index.ts";
import type { Gate, GateContext } from "./Gate.ts";

export const DEFAULT_MAX_RESPONSE_CHARS = 3000;
export const TRUNCATION_MARKER = " … [truncated]";

export interface LengthGateOptions {
  name?: string;
  /** Default 10: it shapes what the other gates already let through. */
  priority?: number;
  /** Longest content let through, marker included (default 3000 UTF-16 units, as String#length counts). */
  maxChars?: number;
  /** Appended where the text was cut, so the reader sees that it was. */
  marker?: string;
  /** Which proposals it applies to (default: speech). */
  kinds?: readonly ProposalKind[];
  trigger?: (ctx: GateContext, proposal: Proposal) => boolean;
}

/**
 * A response limit. A longer text is cut, at a word boundary where there is one near the
 * limit, and a visible marker is appended: the reader knows something is missing, and the
 * result (marker included) fits the limit, so re-verifying it at dispatch passes.
 */
export function lengthGate(options: LengthGateOptions = {}): Gate {
  const maxChars = options.maxChars ?? DEFAULT_MAX_RESPONSE_CHARS;
  const marker = options.marker ?? TRUNCATION_MARKER;
  if (!Number.isInteger(maxChars) || maxChars <= marker.length) {
    throw new RangeError(`length gate: maxChars must be an integer larger than the marker (${marker.length} chars), got ${maxChars}`);
  }
  const kinds = new Set<ProposalKind>(options.kinds ?? ["speak"]);
  return {
    name: options.name ?? "length",
    priority: options.priority ?? 10,
    ...(options.trigger ? { trigger: options.trigger } : {}),
    verify(proposal) {
      if (!kinds.has(proposal.kind) || proposal.content.length <= maxChars) return proposal;
      return { ...proposal, content: truncate(proposal.content, maxChars, marker) };
    },
  };
}

/** `text` cut to at most `maxChars` including `marker`. */
export function truncate(text: string, maxChars: number, marker = TRUNCATION_MARKER): string {
  if (text.length <= maxChars) return text;
  const room = maxChars - marker.length;
  let cut = text.slice(0, room);
  // Never split a surrogate pair: half an emoji renders as garbage.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  // Cut at the last word boundary, unless that throws away most of the text (one huge "word").
  const atWordEnd = /\s/.test(text.charAt(cut.length));
  if (!atWordEnd) {
    const lastSpace = cut.search(/\s\S*$/);
    if (lastSpace >= room * 0.8) cut = cut.slice(0, lastSpace);
  }
  return cut.trimEnd() + marker;
}
