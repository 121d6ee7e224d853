/**
 * NATS subject syntax, for the in-process bus (which must route exactly as a NATS server
 * would) and for both buses' argument checks (so a bad subject fails the same way, with
 * the same error, whichever bus is underneath). These are the general NATS rules; the
 * stricter ensoul name rule lives in subjects.ts.
 */
import { InvalidSubjectError } from "./errors.ts";

const WHITESPACE = /[\s\u0000]/;

function tokensOf(subject: unknown, what: string): string[] {
  if (typeof subject !== "string") throw new InvalidSubjectError(String(subject), `${what} must be a string`);
  if (subject.length === 0) throw new InvalidSubjectError(subject, `${what} must not be empty`);
  if (WHITESPACE.test(subject)) throw new InvalidSubjectError(subject, `${what} must not contain whitespace`);
  const tokens = subject.split(".");
  if (tokens.some((t) => t.length === 0)) throw new InvalidSubjectError(subject, `${what} has an empty token`);
  return tokens;
}

/** A subject to publish or request on: no wildcards. */
export function assertPublishSubject(subject: string): void {
  for (const t of tokensOf(subject, "publish subject")) {
    if (t === "*" || t === ">") throw new InvalidSubjectError(subject, "a publish subject must not contain wildcards");
  }
}

/** A subscription subject: `*` stands for one whole token, `>` for the rest and only last. */
export function assertSubscribeSubject(subject: string): void {
  const tokens = tokensOf(subject, "subscription subject");
  tokens.forEach((t, i) => {
    if (t === ">" && i !== tokens.length - 1) throw new InvalidSubjectError(subject, "'>' must be the last token");
    if (t !== "*" && t !== ">" && (t.includes("*") || t.includes(">"))) {
      throw new InvalidSubjectError(subject, `wildcards must be whole tokens (found ${JSON.stringify(t)})`);
    }
  });
}

/** Whether a concrete subject matches a (possibly wildcard) pattern, token by token. */
export function subjectMatches(pattern: string, subject: string): boolean {
  if (pattern === subject) return true;
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    const pt = p[i];
    if (pt === ">") return s.length > i;
    if (i >= s.length) return false;
    if (pt !== "*" && pt !== s[i]) return false;
  }
  return p.length === s.length;
}

/**
 * Whether every subject matched by `inner` is also matched by `outer` (e.g. a durable
 * consumer's filter against the stream's subjects).
 */
export function subjectContains(outer: string, inner: string): boolean {
  const o = outer.split(".");
  const n = inner.split(".");
  for (let i = 0; i < o.length; i++) {
    const ot = o[i];
    if (ot === ">") return n.length > i;
    if (i >= n.length) return false;
    const nt = n[i];
    if (nt === ">") return false;
    if (ot !== "*" && ot !== nt) return false;
  }
  return o.length === n.length;
}
