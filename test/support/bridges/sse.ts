/** A Server-Sent Events reader for tests: parses `event:`/`id:`/`data:` frames from a fetch body. */
export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

export interface SseStream {
  events: SseEvent[];
  /** Resolves once `predicate` holds over the events so far (checked on every event). */
  until(predicate: (events: SseEvent[]) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { Accept: "text/event-stream", ...headers }, signal: controller.signal });
  if (res.status !== 200 || !res.body) throw new Error(`SSE ${url}: HTTP ${res.status} ${await res.text()}`);
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const e: SseEvent = { event: "message", data: "" };
          let data: string[] = [];
          for (const line of frame.split("\n")) {
            if (line.startsWith(":")) continue;
            const [field, ...rest] = line.split(":");
            const value = rest.join(":").replace(/^ /, "");
            if (field === "event") e.event = value;
            else if (field === "id") e.id = value;
            else if (field === "data") data.push(value);
          }
          if (data.length === 0 && e.event === "message") continue;
          e.data = data.join("\n");
          data = [];
          events.push(e);
          for (const w of waiters) w();
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    events,
    until(predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (predicate(events)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(events);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`SSE: condition not met within ${timeoutMs} ms; events: ${JSON.stringify(events)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => controller.abort(),
  };
}
