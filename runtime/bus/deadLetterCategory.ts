/**
 * A dead letter's reason in a word, for counting (a metric label, a status line). Reasons are
 * sentences that quote what arrived (a soul id someone made up, a fragment of a schema
 * error), and a metric label must not carry what a stranger wrote nor grow without bound: so
 * the category is one of a fixed list, read from the reason's known shapes, and `other` for
 * anything else.
 */
export const DEAD_LETTER_CATEGORIES = [
  "oversized",
  "invalid-envelope",
  "unexpected-kind",
  "misaddressed",
  "bad-subject",
  "unknown-soul",
  "unknown-process",
  "node-only-field",
  "expired-soul",
  "delivery-exhausted",
  "gate-request",
  "other",
] as const;

export type DeadLetterCategory = (typeof DEAD_LETTER_CATEGORIES)[number];

/** First match wins; each pattern is anchored on the fixed words ensoul's receivers write. */
const SHAPES: readonly [RegExp, DeadLetterCategory][] = [
  [/^oversized:/, "oversized"],
  [/^(payload is not bytes|empty payload|not msgpack|not plain msgpack|envelope must be|unsupported envelope version|unknown kind|invalid \w+ envelope)/, "invalid-envelope"],
  [/^unexpected kind /, "unexpected-kind"],
  [/^envelope is addressed to /, "misaddressed"],
  [/^(no soul:|not a perceive subject)/, "bad-subject"],
  [/^unknown soul /, "unknown-soul"],
  [/^perception routed to unknown process /, "unknown-process"],
  [/^perception on the perceive subject carries /, "node-only-field"],
  [/^soul '[^']*' has expired/, "expired-soul"],
  [/^handler failed on delivery /, "delivery-exhausted"],
  [/gate verify subject|^proposal must be a map|^invalid proposal:/, "gate-request"],
];

export function deadLetterCategory(reason: string): DeadLetterCategory {
  for (const [shape, category] of SHAPES) if (shape.test(reason)) return category;
  return "other";
}
