import { createBrowserInspector, createInspector, createSkyInspector, type StatelyInspectionEvent } from "@statelyai/inspect";
import { createInspectorServer } from "@statelyai/inspect/server";
import type { AnyEventObject, InspectionEvent, MachineContext, Observer } from "xstate";
import { InspectorSocket } from "./InspectorSocket.ts";
import { sanitizeContext, sanitizeEvent } from "./sanitize.ts";

export { sanitizeContext, sanitizeEvent, sanitizeValue, REDACTED } from "./sanitize.ts";

/**
 * Where inspection events go. Pass `inspection.inspect` as the `inspect` option of
 * `createSoul`, `createSoulHost`, a daimon or a skill gate: every actor of that system (the
 * soul, its process states, the ISM it deliberates with, the promises it runs) reports there.
 *
 * - `ws`: a WebSocket receiver that speaks the Stately inspector protocol (one JSON inspection
 *   event per text message), e.g. another process's `createInspectorServer` relay at `url`.
 * - `server`: starts @statelyai/inspect's `createInspectorServer` relay here, on `port`, and
 *   connects to it. The relay forwards every message to its other clients (a browser page it
 *   serves at `http://localhost:<port>`, which embeds the Stately inspector, or any WebSocket
 *   client) and replays its last 200 messages to a client that connects late.
 * - `sky`: Stately Sky, for users with network access (and an API key for private sessions).
 * - `browser`: the Stately inspector in a browser window. It needs `window` (it opens a tab
 *   and talks to it with `postMessage`), so it cannot run in Node, where souls run: there the
 *   library only logs an error and returns a do-nothing adapter. Asking for it in Node is an
 *   error here; `browserInspection()` gives it only where a window exists.
 */
export type InspectTarget =
  | { mode: "ws"; url: string }
  | { mode: "server"; port?: number; autoOpen?: boolean }
  | { mode: "sky"; apiKey?: string }
  | { mode: "browser"; url?: string };

export interface Inspection {
  /** Pass as the `inspect` option of createActor / createSoul. */
  inspect: Observer<InspectionEvent>;
  /** Where a person can watch, when known. */
  url?: string;
  /** Resolves once events flow (the socket is open); at once where there is no socket to wait for. */
  ready(): Promise<void>;
  /**
   * Sends what is on its way, closes the connection and stops a relay this inspection started.
   * Stop the souls first: events after this are dropped.
   */
  stop(): Promise<void>;
}

/**
 * The library's options: everything that leaves the process is sanitized (see sanitize.ts).
 * The depth limit is raised from the library's 10 because a soul's definition is deeper than
 * that (state > process > running > phase > invoke > onDone > guard > params), and a cut
 * definition cannot be drawn.
 */
const inspectorOptions = {
  serializationDepthLimit: 24,
  sanitizeContext: (context: MachineContext) => sanitizeContext(context) as MachineContext,
  sanitizeEvent: (event: AnyEventObject) => sanitizeEvent(event),
};

function socketInspection(url: string, shownUrl: string, after?: () => void): Inspection {
  const socket = new InspectorSocket(url);
  const inspector = createInspector(
    { start: () => socket.start(), stop: () => void socket.stop(), send: (event: StatelyInspectionEvent) => socket.send(event) },
    inspectorOptions,
  );
  inspector.start();
  return {
    inspect: inspector.inspect,
    url: shownUrl,
    ready: () => socket.ready(),
    stop: async () => {
      await socket.stop();
      after?.();
    },
  };
}

export function createInspection(target: InspectTarget): Inspection {
  switch (target.mode) {
    case "ws":
      return socketInspection(target.url, target.url);
    case "server": {
      const port = target.port ?? 8080;
      // The relay has no error handler of its own: a port in use is an uncaught error. Pick a
      // free port, or use `ws` mode against a relay that is already running.
      const server = createInspectorServer({ port, autoOpen: target.autoOpen ?? false });
      // The relay's `stop` closes its listener; a client still connected to it (a browser tab
      // left open) keeps the HTTP server alive until that client goes.
      return socketInspection(`ws://127.0.0.1:${port}`, `http://localhost:${port}`, () => server.stop());
    }
    case "sky": {
      // The library keeps Sky's socket to itself and its `stop` does not close it; a process
      // inspected through Sky ends with `process.exit`, as the CLI does.
      const inspector = createSkyInspector({ ...(target.apiKey ? { apiKey: target.apiKey } : {}), ...inspectorOptions });
      return { inspect: inspector.inspect, ready: () => Promise.resolve(), stop: async () => inspector.stop() };
    }
    case "browser": {
      const inspection = browserInspection(target.url ? { url: target.url } : {});
      if (!inspection) {
        throw new Error("the browser inspector needs a browser window (globalThis.window); in Node use mode 'server' or 'ws'");
      }
      return inspection;
    }
  }
}

/**
 * The Stately browser inspector, when this code runs in a browser (a debugger page, a web
 * client embedding a soul); undefined in Node, where the library can only log an error.
 */
export function browserInspection(options: { url?: string } = {}): Inspection | undefined {
  if (typeof (globalThis as { window?: unknown }).window === "undefined") return undefined;
  const inspector = createBrowserInspector({ ...(options.url ? { url: options.url } : {}), ...inspectorOptions });
  return {
    inspect: inspector.inspect,
    ...(options.url ? { url: options.url } : {}),
    ready: () => Promise.resolve(),
    stop: async () => inspector.stop(),
  };
}
