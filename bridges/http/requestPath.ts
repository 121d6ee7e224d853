/**
 * What a request to the HTTP bridge asks for, read without trusting it: a path that is no URL,
 * or a soul id that is no valid percent-encoding (`/v1/souls/%E0%A4%A/ws`), is an answer (400),
 * never an exception in a listener.
 */
const SOUL_PATH = /^\/v1\/souls\/([^/]+)\/(perceptions|speech|ws)$/;

export type SoulVerb = "perceptions" | "speech" | "ws";

/** The path of the request target, or undefined when it cannot be read. */
export function pathOf(target: string | undefined): string | undefined {
  try {
    return new URL(target ?? "/", "http://bridge").pathname;
  } catch {
    return undefined;
  }
}

export type SoulTarget = { ok: true; id: string; verb: SoulVerb } | { ok: false; status: 400 | 404; error: string };

/** The soul and endpoint a path names. */
export function soulTargetOf(path: string): SoulTarget {
  const m = SOUL_PATH.exec(path);
  if (!m) return { ok: false, status: 404, error: "not found; see docs/HTTP.md for the endpoints" };
  let id: string;
  try {
    id = decodeURIComponent(m[1] as string);
  } catch {
    return { ok: false, status: 400, error: "the soul id in the path is not valid percent-encoding" };
  }
  return { ok: true, id, verb: m[2] as SoulVerb };
}
