/**
 * What a credential looks like, once for the whole runtime, and the one function that hides
 * credentials in text that leaves the process: error messages, logs, banners, inspector
 * snapshots. The secret-scanner gate (actors/gate/secrets.ts) blocks speech by the same list.
 *
 * It lives with the log, the lowest layer: every line the log prints is redacted with it, and
 * every layer above can use it (the bus, for a NATS URL in a connection error; the node, the
 * CLI, the inspector, the gates).
 *
 * Each pattern is anchored so that ordinary words containing the same letters ("risk-based",
 * "desk-top") do not match, and matches only the secret itself (lookbehinds keep the
 * `password=` or `Bearer ` before it), so a redaction still shows what was there.
 */
export interface SecretPattern {
  /** What it is, for an interception reason ("an Anthropic API key"); never the secret itself. */
  label: string;
  pattern: RegExp;
  /**
   * Hidden when redacting, but not a reason to block speech: ordinary text has it too
   * (`ssh://git@github.com` has the shape of a NATS token URL).
   */
  redactOnly?: boolean;
}

export const REDACTED = "[redacted]";

// Not after a letter, digit or token character: the key starts a token.
const START = String.raw`(?<![A-Za-z0-9_-])`;
// A URL's scheme and `//`, as in nats://, tls://, wss://, https://.
const URL_START = String.raw`[A-Za-z][A-Za-z0-9+.-]*:\/\/`;
const PRIVATE_KEY_LINE = (edge: string) => String.raw`-----${edge} (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`;

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  { label: "an Anthropic API key", pattern: new RegExp(String.raw`${START}sk-ant-[A-Za-z0-9_-]{20,}`) },
  // OpenAI keys (sk-..., sk-proj-...); real ones always mix in digits, words do not.
  { label: "an OpenAI API key", pattern: new RegExp(String.raw`${START}sk-(?!ant-)(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}`) },
  { label: "a Groq API key", pattern: new RegExp(String.raw`${START}gsk_[A-Za-z0-9]{20,}`) },
  { label: "an AWS access key id", pattern: /(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])/ },
  { label: "a GitHub token", pattern: new RegExp(String.raw`${START}(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`) },
  { label: "a Slack token", pattern: new RegExp(String.raw`${START}xox[abprs]-[A-Za-z0-9-]{10,}`) },
  // The whole block when its end is there, so a redaction leaves none of the key behind.
  { label: "a private key", pattern: new RegExp(String.raw`${PRIVATE_KEY_LINE("BEGIN")}(?:[\s\S]*?${PRIVATE_KEY_LINE("END")})?`) },
  // Header and payload are base64url JSON objects, so both start with "eyJ" ('{"').
  { label: "a JWT", pattern: new RegExp(String.raw`${START}eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`) },
  { label: "a bearer token", pattern: /(?<=\bBearer\s+)[A-Za-z0-9._~+/-]{12,}=*/ },
  {
    label: "a credential assignment",
    pattern:
      /(?<=\b(?:api[_-]?key|apikey|api[_-]?secret|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token|password|passwd)["']?\s*[:=]\s*["']?)[^\s"',;]{8,}/i,
  },
  // nats://alice:s3cret@host: the user stays, the password goes.
  { label: "a password in a URL", pattern: new RegExp(String.raw`(?<=${URL_START}[^\s/@:]*:)[^\s/@]+(?=@)`) },
  // nats://s3cret@host: NATS reads a lone user part as a token.
  { label: "a token in a URL", pattern: new RegExp(String.raw`(?<=${URL_START})[^\s/@:]+(?=@)`), redactOnly: true },
];

const GLOBAL_PATTERNS = SECRET_PATTERNS.map(({ pattern }) => new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`));

/** The text with every credential in it replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const pattern of GLOBAL_PATTERNS) out = out.replace(pattern, REDACTED);
  return out;
}
