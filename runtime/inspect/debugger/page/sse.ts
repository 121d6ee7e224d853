/**
 * `GET /api/events` read with fetch and a streaming reader rather than EventSource, which
 * cannot send the Authorization header. Parses `event:` / `data:` lines, dispatches on a
 * blank line, skips comments, and reconnects with backoff (1 s doubling to 30 s).
 */
import { authHeaders } from "./api.ts";
import { inBackground } from "./dom.ts";
import type { LiveEvent } from "./types.ts";

export type LinkState = { state: "connecting" } | { state: "live" } | { state: "retrying"; inMs: number; why: string } | { state: "unauthorized" };

export interface SseHandlers {
  onEvent(event: LiveEvent): void;
  onState(state: LinkState): void;
}

/** Splits a stream of text into SSE messages; feed it chunks, it calls `emit` per message. */
export function sseParser(emit: (event: LiveEvent) => void): (chunk: string) => void {
  let buffer = "";
  let type = "";
  let data: string[] = [];
  const line = (text: string) => {
    if (text === "") {
      if (data.length > 0) dispatch(type || "message", data.join("\n"));
      type = "";
      data = [];
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "event") type = value;
    else if (field === "data") data.push(value);
  };
  const dispatch = (eventType: string, raw: string) => {
    let parsed: unknown = raw;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // Not JSON: handed over as text.
    }
    emit({ type: eventType, data: parsed });
  };
  return (chunk) => {
    buffer += chunk;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop() ?? "";
    lines.forEach(line);
  };
}

async function readOnce(handlers: SseHandlers, signal: AbortSignal): Promise<"ended" | "unauthorized"> {
  const res = await fetch("/api/events", { headers: { Accept: "text/event-stream", ...authHeaders() }, signal, cache: "no-store" });
  if (res.status === 401) return "unauthorized";
  if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
  handlers.onState({ state: "live" });
  const feed = sseParser(handlers.onEvent);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return "ended";
    feed(decoder.decode(value, { stream: true }));
  }
}

/** Listens until `stop()` is called. */
export function connectEvents(handlers: SseHandlers): { stop(): void } {
  const abort = new AbortController();
  let delay = 1000;
  const loop = async () => {
    while (!abort.signal.aborted) {
      handlers.onState({ state: "connecting" });
      let why = "the stream ended";
      try {
        const outcome = await readOnce({ ...handlers, onState: (s) => { delay = 1000; handlers.onState(s); } }, abort.signal);
        if (outcome === "unauthorized") return handlers.onState({ state: "unauthorized" });
      } catch (err) {
        if (abort.signal.aborted) return;
        why = (err as Error).message;
      }
      handlers.onState({ state: "retrying", inMs: delay, why });
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  };
  inBackground(loop());
  return { stop: () => abort.abort() };
}
