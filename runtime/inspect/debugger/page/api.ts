/**
 * The API client. The token (`ENSOUL_DEBUG_TOKEN`) comes once as `?token=` in the address:
 * it is kept in the tab's session storage, removed from the address bar, and sent as
 * `Authorization: Bearer` on every request (the events stream included, see sse.ts).
 */
import type { FleetReply, Revert, SoulDetail, TurnsReply } from "./types.ts";

const TOKEN_KEY = "ensoul.debugToken";

/** Takes `?token=` from the address into session storage and out of the address bar. */
export function adoptTokenFromUrl(): void {
  const url = new URL(window.location.href);
  const token = url.searchParams.get("token");
  if (token === null) return;
  if (token !== "") sessionStorage.setItem(TOKEN_KEY, token);
  url.searchParams.delete("token");
  history.replaceState(history.state, "", `${url.pathname}${url.search}${url.hash}`);
}

export function authHeaders(): Record<string, string> {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const headers = { Accept: "application/json", ...authHeaders(), ...(init.headers as Record<string, string> | undefined) };
  let res: Response;
  try {
    res = await fetch(path, { ...init, headers });
  } catch (err) {
    throw new ApiError(0, `the debugger does not answer (${(err as Error).message})`);
  }
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const message = body && typeof body === "object" && "error" in body ? String((body as { error: unknown }).error) : text.slice(0, 200);
    throw new ApiError(res.status, res.status === 401 ? `${message || "unauthorized"}: open the page with ?token=<ENSOUL_DEBUG_TOKEN>` : message || res.statusText);
  }
  return body as T;
}

const soulPath = (id: string) => `/api/souls/${encodeURIComponent(id)}`;

export const api = {
  fleet: () => request<FleetReply>("/api/souls"),
  soul: (id: string) => request<SoulDetail>(soulPath(id)),
  turns: (id: string, page: { before?: number; limit?: number } = {}) => {
    const query = new URLSearchParams();
    if (page.before !== undefined) query.set("before", String(page.before));
    if (page.limit !== undefined) query.set("limit", String(page.limit));
    const q = query.toString();
    return request<TurnsReply>(`${soulPath(id)}/turns${q ? `?${q}` : ""}`);
  },
  revert: (id: string, turn: number) =>
    request<{ soulId: string; revert: Revert }>(`${soulPath(id)}/revert`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ turn }),
    }),
};
