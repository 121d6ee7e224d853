/** What ensoul's HTTP endpoints share: bearer checks, JSON replies, bounded bodies, listeners nothing escapes. */
export { bearerDigest, bearerMatches, readBody, readJsonBody, sendJson, type Body } from "./httpJson.ts";
export { guardedListener } from "./guardedListener.ts";
