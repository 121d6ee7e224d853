import { createServer } from "node:net";
import { createInspection, type Inspection, type InspectTarget } from "../inspect/index.ts";
import { CliError } from "./CliError.ts";

export const DEFAULT_INSPECT_PORT = 8080;

/**
 * `--inspect [port|ws-url]` as commander hands it over (`true` for the bare flag, undefined
 * without it): where the inspection events of the machines go, or undefined for nowhere.
 */
export function inspectTarget(flag: string | boolean | undefined): InspectTarget | undefined {
  if (flag === undefined || flag === false) return undefined;
  if (flag === true) return { mode: "server", port: DEFAULT_INSPECT_PORT };
  const value = flag.trim();
  if (/^wss?:\/\//i.test(value) && URL.canParse(value)) return { mode: "ws", url: value };
  if (/^\d+$/.test(value)) {
    const port = Number(value);
    if (port >= 1 && port <= 65535) return { mode: "server", port };
  }
  // A bare --inspect takes the next word as its value, so a misplaced argument lands here.
  throw new CliError(`--inspect takes a port (1-65535) or a ws:// or wss:// URL, got '${flag}' (give other arguments before a bare --inspect)`);
}

/**
 * Opens the inspection. The relay of `server` mode has no error handler of its own, so a port
 * already in use would be an uncaught error: it is checked first and refused with a clear one.
 */
export async function openInspection(target: InspectTarget): Promise<Inspection> {
  if (target.mode === "server") {
    const port = target.port ?? DEFAULT_INSPECT_PORT;
    if (!(await portFree(port))) {
      throw new CliError(`--inspect: port ${port} is in use; give another port, or the ws:// URL of the inspector relay already running there`);
    }
  }
  return createInspection(target);
}

/** Listens on the port as the relay will (every interface) and lets it go again. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, () => probe.close(() => resolve(true)));
  });
}
