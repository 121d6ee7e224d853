/** What ensoul's HTTP endpoints share: bearer checks, JSON replies, bounded bodies. */
export { bearerDigest, bearerMatches, readBody, readJsonBody, sendJson, type Body } from "./httpJson.ts";
