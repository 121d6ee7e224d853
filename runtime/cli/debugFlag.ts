/**
 * `--debug [port]` of `ensoul up` and `ensoul demo`: the debugger page and its API
 * (docs/DEBUGGER.md) on 127.0.0.1, watching the cluster over the node's bus. The token comes
 * from ENSOUL_DEBUG_TOKEN and is never printed: the URL shown is the page without it.
 */
import type { Bus } from "../bus/index.ts";
import { DEFAULT_DEBUG_PORT, startDebugger, type DebuggerHandle } from "../inspect/index.ts";
import { CliError } from "./CliError.ts";

/**
 * The port `--debug` asks for, as commander hands the flag over (`true` for the bare flag,
 * undefined without it), or undefined for no debugger. 0 takes any free port.
 */
export function debugPort(flag: string | boolean | undefined): number | undefined {
  if (flag === undefined || flag === false) return undefined;
  if (flag === true) return DEFAULT_DEBUG_PORT;
  const value = flag.trim();
  if (/^\d{1,5}$/.test(value) && Number(value) <= 65535) return Number(value);
  // A bare --debug takes the next word as its value, so a misplaced argument lands here.
  throw new CliError(`--debug takes a port (0-65535; 0 for any free port), got '${flag}' (give other arguments before a bare --debug)`);
}

/** The token the debugger requires, or undefined when ENSOUL_DEBUG_TOKEN is unset or blank. */
export function debugToken(env: NodeJS.ProcessEnv): string | undefined {
  const token = env.ENSOUL_DEBUG_TOKEN?.trim();
  return token ? token : undefined;
}

/** Starts the debugger for a running node; a port that cannot be had is a CliError (the caller stops the node). */
export async function openDebugger(bus: Bus, port: number, env: NodeJS.ProcessEnv, nodeId: string): Promise<DebuggerHandle> {
  const token = debugToken(env);
  try {
    return await startDebugger({ bus, port, nodes: [nodeId], ...(token !== undefined ? { token } : {}) });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "EADDRINUSE" ? "the port is in use; give another port with --debug <port>" : code === "EACCES" ? "permission denied" : (err as Error).message;
    throw new CliError(`--debug: cannot listen on 127.0.0.1:${port} (${why})`, 1);
  }
}

/** The line that says where the debugger is: its URL, and how to give the token when one is needed. */
export function debuggerLine(command: string, handle: DebuggerHandle, env: NodeJS.ProcessEnv): string {
  const token = debugToken(env) !== undefined ? " (open it with ?token=<ENSOUL_DEBUG_TOKEN>)" : "";
  return `ensoul ${command}: debugger at ${handle.url}${token}\n`;
}
