/**
 * Secret detection for outgoing text. The patterns are the shapes of real credentials, each
 * anchored so that ordinary words containing the same letters ("risk-based", "desk-top")
 * do not match. A finding names the kind of secret, never the secret: reasons end up in
 * logs and on the events subject.
 */
export interface SecretPattern {
  /** What it is, for the interception reason ("an Anthropic API key"). */
  label: string;
  pattern: RegExp;
}

// Not after a letter, digit or token character: the key starts a token.
const START = String.raw`(?<![A-Za-z0-9_-])`;

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  { label: "an Anthropic API key", pattern: new RegExp(String.raw`${START}sk-ant-[A-Za-z0-9_-]{20,}`) },
  // OpenAI keys (sk-..., sk-proj-...); real ones always mix in digits, words do not.
  { label: "an OpenAI API key", pattern: new RegExp(String.raw`${START}sk-(?!ant-)(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}`) },
  { label: "a Groq API key", pattern: new RegExp(String.raw`${START}gsk_[A-Za-z0-9]{20,}`) },
  { label: "an AWS access key id", pattern: /(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])/ },
  { label: "a GitHub token", pattern: new RegExp(String.raw`${START}(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`) },
  { label: "a Slack token", pattern: new RegExp(String.raw`${START}xox[bpas]-[A-Za-z0-9-]{10,}`) },
  { label: "a private key", pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/ },
  // Header and payload are base64url JSON objects, so both start with "eyJ" ('{"').
  { label: "a JWT", pattern: new RegExp(String.raw`${START}eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`) },
  {
    label: "a credential assignment",
    pattern: /\b(?:api[_-]?key|apikey|api[_-]?secret|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token|password|passwd)["']?\s*[:=]\s*["']?[^\s"',;]{8,}/i,
  },
];

/** Vault values shorter than this are ignored: a two-letter "secret" would block every message. */
export const MIN_VAULT_VALUE_LENGTH = 6;

export interface SecretFinding {
  label: string;
}

export interface SecretScanner {
  /** The kinds of secret in the text (each label once), in pattern order; empty when clean. */
  scan(text: string): SecretFinding[];
}

/**
 * A scanner for the built-in patterns, any extra ones, and the exact values of a vault
 * (`{ NAME: value }` or a list of values). Vault hits are labelled with the name only.
 */
export function createSecretScanner(options: { vault?: Readonly<Record<string, string>> | readonly string[]; patterns?: readonly SecretPattern[] } = {}): SecretScanner {
  const patterns = [...SECRET_PATTERNS, ...(options.patterns ?? [])];
  const vault: { label: string; value: string }[] = [];
  if (Array.isArray(options.vault)) {
    for (const value of options.vault as readonly string[]) vault.push({ label: "a vault secret", value });
  } else if (options.vault) {
    for (const [name, value] of Object.entries(options.vault)) vault.push({ label: `the vault secret ${name}`, value });
  }
  const vaultValues = vault.filter((v) => typeof v.value === "string" && v.value.length >= MIN_VAULT_VALUE_LENGTH);
  return {
    scan(text) {
      const found: SecretFinding[] = [];
      for (const { label, pattern } of patterns) {
        // A caller's pattern may carry the g or y flag, which makes test() stateful.
        pattern.lastIndex = 0;
        if (pattern.test(text)) found.push({ label });
      }
      for (const { label, value } of vaultValues) if (text.includes(value)) found.push({ label });
      return found;
    },
  };
}
