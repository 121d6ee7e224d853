/**
 * A real `nats-server` for tests. Each server gets its own loopback port and its own
 * JetStream store directory, so test files can run in parallel and a restart keeps the
 * store (the point of the restart tests). Nothing here talks to anything but 127.0.0.1.
 * No vitest import here: the benchmark uses this file outside the test runner.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { freePort } from "../ports.ts";

export const INSTALL_HINT = "install it with: apt-get update && apt-get install -y nats-server";

export interface NatsServerOptions {
  /** Enable JetStream with a temp store dir (default true). */
  jetstream?: boolean;
  /** Extra config file text (nats-server's config syntax), e.g. an `authorization {}` block. */
  config?: string;
  /** Reuse a port (restart tests pass the old one); default: a free loopback port. */
  port?: number;
  /**
   * The server's name (`-n`, and JetStream's server name in a cluster); default a unique
   * `ensoul-test-<pid>-<hex>`. Kept across restarts, as a JetStream cluster requires.
   */
  name?: string;
}

export interface NatsServerHandle {
  url: string;
  port: number;
  /** The server's name, as its INFO and JetStream's cluster info give it. */
  name: string;
  /** The JetStream store dir; kept across stop/kill/restart, removed by dispose(). */
  storeDir: string;
  /** Graceful stop (SIGTERM); the store is kept so restart() can bring it back. */
  stop(): Promise<void>;
  /** Stop if running, then start again on the same port with the same store. */
  restart(): Promise<void>;
  /** SIGKILL: a crash, no shutdown work on the server side. */
  kill(): Promise<void>;
  /** Stop and delete the store and config. */
  dispose(): Promise<void>;
  readonly running: boolean;
}

let cachedBinary: string | null | undefined;

/**
 * Path of the nats-server binary, or null. NATS_SERVER_BIN, when set, is the only place
 * looked at (so `NATS_SERVER_BIN=/nonexistent` shows what a machine without it does);
 * otherwise PATH, then /usr/sbin (Debian puts it there, outside a non-root PATH).
 */
export function natsAvailable(): string | null {
  if (cachedBinary !== undefined) return cachedBinary;
  const candidates: string[] = [];
  if (process.env.NATS_SERVER_BIN) candidates.push(process.env.NATS_SERVER_BIN);
  else {
    for (const dir of (process.env.PATH ?? "").split(delimiter)) if (dir) candidates.push(join(dir, "nats-server"));
    candidates.push("/usr/sbin/nats-server", "/usr/local/bin/nats-server", "/usr/bin/nats-server");
  }
  cachedBinary = null;
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      cachedBinary = c;
      break;
    } catch {
      // not here; keep looking
    }
  }
  return cachedBinary;
}

/** Re-exported for the tests that start nats-server and already import from here. */
export { freePort };

/** Resolves once a server named `name` greets a TCP client on the port with its INFO line. */
async function waitForInfo(port: number, name: string, deadlineMs: number, exited: () => string | null): Promise<void> {
  const start = Date.now();
  for (;;) {
    const why = exited();
    if (why) throw new Error(`nats-server exited before accepting connections: ${why}`);
    const info = await new Promise<string | null>((resolve) => {
      const sock = createConnection({ host: "127.0.0.1", port });
      let buf = "";
      const done = (v: string | null) => {
        sock.destroy();
        resolve(v);
      };
      sock.setTimeout(500, () => done(null));
      sock.on("data", (d) => {
        buf += d.toString("utf8");
        const eol = buf.indexOf("\r\n");
        if (eol >= 0) done(buf.startsWith("INFO ") ? buf.slice(5, eol) : null);
      });
      sock.on("error", () => done(null));
    });
    // Another test file's server on the same port must not pass for ours.
    if (info !== null) {
      let serverName = "";
      try {
        serverName = String((JSON.parse(info) as { server_name?: unknown }).server_name ?? "");
      } catch {
        // not JSON: not a nats-server
      }
      if (serverName === name) return;
    }
    if (Date.now() - start > deadlineMs) throw new Error(`nats-server ${name} did not accept connections on 127.0.0.1:${port} within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test file that dies must not leave servers behind.
  process.on("exit", () => {
    for (const child of live) child.kill("SIGKILL");
  });
}

export async function startNatsServer(opts: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const bin = natsAvailable();
  if (!bin) throw new Error(`nats-server not found: ${INSTALL_HINT}`);
  installExitHook();
  const jetstream = opts.jetstream ?? true;
  const dir = mkdtempSync(join(tmpdir(), "ensoul-nats-"));
  const storeDir = join(dir, "js");
  const name = opts.name ?? `ensoul-test-${process.pid}-${randomBytes(4).toString("hex")}`;
  let configPath: string | null = null;
  if (opts.config) {
    configPath = join(dir, "server.conf");
    writeFileSync(configPath, opts.config);
  }
  const argsFor = (port: number) => {
    const args = ["-a", "127.0.0.1", "-p", String(port), "-n", name];
    if (jetstream) args.push("-js", "-sd", storeDir);
    if (configPath) args.push("-c", configPath);
    return args;
  };

  let child: ChildProcess | null = null;
  let exitReason: string | null = null;
  let stderrTail = "";

  const start = async (port: number) => {
    exitReason = null;
    stderrTail = "";
    const proc = spawn(bin, argsFor(port), { stdio: ["ignore", "ignore", "pipe"] });
    child = proc;
    live.add(proc);
    proc.stderr?.on("data", (d: Buffer) => {
      stderrTail = (stderrTail + d.toString("utf8")).slice(-4000);
    });
    proc.on("exit", (code, signal) => {
      live.delete(proc);
      exitReason = `code ${code} signal ${signal}\n${stderrTail}`;
      if (child === proc) child = null;
    });
    try {
      await waitForInfo(port, name, 10_000, () => exitReason);
    } catch (err) {
      await terminate("SIGKILL");
      throw err;
    }
  };

  const terminate = async (signal: NodeJS.Signals) => {
    const proc = child;
    if (!proc) return;
    const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };

  // A free port can be taken by someone else between our probe and the server's bind: try another.
  let port = opts.port ?? (await freePort());
  for (let attempt = 1; ; attempt++) {
    try {
      await start(port);
      break;
    } catch (err) {
      if (opts.port !== undefined || attempt >= 5) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
      port = await freePort();
    }
  }

  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    name,
    storeDir,
    get running() {
      return child !== null;
    },
    stop: () => terminate("SIGTERM"),
    kill: () => terminate("SIGKILL"),
    async restart() {
      await terminate("SIGTERM");
      await start(port);
    },
    async dispose() {
      await terminate("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
