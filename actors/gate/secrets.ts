/**
 * Secret detection for outgoing text. The patterns are the shapes of real credentials, one
 * list for the whole runtime (runtime/log/secrets.ts, which also redacts logs and errors with
 * it). A finding names the kind of secret, never the secret: reasons end up in logs and on
 * the events subject.
 */
import { SECRET_PATTERNS, type SecretPattern } from "../../runtime/bus/index.ts";

export { SECRET_PATTERNS, type SecretPattern } from "../../runtime/bus/index.ts";

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
  // A redact-only shape (a URL's user part) is ordinary in speech: hidden in logs, never blocked.
  const patterns = [...SECRET_PATTERNS.filter((p) => p.redactOnly !== true), ...(options.patterns ?? [])];
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
