import { createSkyInspector, createWebSocketInspector } from "@statelyai/inspect";
import { createInspectorServer } from "@statelyai/inspect/server";
import type { InspectionEvent, Observer } from "xstate";

/**
 * Where inspection events go:
 * - `ws`: an existing WebSocket relay (another process's `ensoul up --inspect`, or any
 *   Stately-compatible receiver) at `url`;
 * - `server`: start the local relay from @statelyai/inspect/server here, then connect to it;
 *   the relay serves a page that embeds the Stately inspector;
 * - `sky`: Stately Sky, for users who have network access and an account.
 * The browser inspector belongs in browser code; souls run in Node, so it is not offered here.
 */
export type InspectTarget =
  | { mode: "ws"; url: string }
  | { mode: "server"; port?: number; autoOpen?: boolean }
  | { mode: "sky"; apiKey?: string };

export interface Inspection {
  /** Pass as the `inspect` option of createActor / createSoul. */
  inspect: Observer<InspectionEvent>;
  /** Where a person can watch, when known. */
  url?: string;
  stop(): void;
}

const MEMORY_PREVIEW = 40;

/**
 * Working memories grow with every turn; the inspector needs their shape, not every word,
 * and must never receive values that look like credentials.
 */
export function sanitizeContext(context: unknown): unknown {
  return JSON.parse(
    JSON.stringify(context ?? null, (key, value: unknown) => {
      if (/key|token|secret|password/i.test(key) && typeof value === "string") return "[redacted]";
      if (key === "memories" && Array.isArray(value) && value.length > MEMORY_PREVIEW) {
        return [...value.slice(0, 5), `… ${value.length - 10} more …`, ...value.slice(-5)];
      }
      return value;
    }),
  );
}

export function createInspection(target: InspectTarget): Inspection {
  const options = { sanitizeContext: (ctx: unknown) => sanitizeContext(ctx) as Record<string, unknown> };
  switch (target.mode) {
    case "ws": {
      const inspector = createWebSocketInspector({ url: target.url, ...options });
      return { inspect: inspector.inspect, url: target.url, stop: () => inspector.stop() };
    }
    case "server": {
      const port = target.port ?? 8080;
      const server = createInspectorServer({ port, autoOpen: target.autoOpen ?? false });
      const url = `ws://127.0.0.1:${port}`;
      const inspector = createWebSocketInspector({ url, ...options });
      return {
        inspect: inspector.inspect,
        url: `http://127.0.0.1:${port}`,
        stop: () => {
          inspector.stop();
          server.stop();
        },
      };
    }
    case "sky": {
      const inspector = createSkyInspector({ apiKey: target.apiKey, ...options });
      return { inspect: inspector.inspect, stop: () => inspector.stop() };
    }
  }
}
