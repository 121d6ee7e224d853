/** The page's two places: `#/` the fleet, `#/souls/<id>` one soul. */

export type Route = { view: "fleet" } | { view: "soul"; id: string };

export function parseRoute(hash: string): Route {
  const match = /^#\/souls\/(.+)$/.exec(hash);
  if (!match) return { view: "fleet" };
  try {
    return { view: "soul", id: decodeURIComponent(match[1]) };
  } catch {
    return { view: "soul", id: match[1] };
  }
}

export function soulHref(id: string): string {
  return `#/souls/${encodeURIComponent(id)}`;
}

/** Calls `onRoute` now and on every change of the address's hash. */
export function watchRoute(onRoute: (route: Route) => void): void {
  window.addEventListener("hashchange", () => onRoute(parseRoute(window.location.hash)));
  onRoute(parseRoute(window.location.hash));
}
