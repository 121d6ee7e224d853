/**
 * A real `nats-server` for tests. Each server gets its own loopback port and its own
 * JetStream store directory, so test files can run in parallel and a restart keeps the
 * store (the point of the restart tests). Nothing here talks to anything but 127.0.0.1.
 * No vitest import here: the benchmark uses this file outside the test runner.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

export const INSTALL_HINT = "install it with: apt-get update && apt-get install -y nats-server";

export interface NatsServerOptions {
  /** Enable JetStream with a temp store dir (default true). */
  jetstream?: boolean;
  /** Extra config file text (nats-server's config syntax), e.g. an `authorization {}` block. */
  config?: string;
  /** Reuse a port (restart tests pass the old one); default: a free loopback port. */
  port?: number;
}

export interface NatsServerHandle {
  url: string;
  port: number;
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

/** Path of the nats-server binary (NATS_SERVER_BIN, PATH, /usr/sbin, /usr/local/bin), or null. */
export function natsAvailable(): string | null {
  if (cachedBinary !== undefined) return cachedBinary;
  const candidates: string[] = [];
  if (process.env.NATS_SERVER_BIN) candidates.push(process.env.NATS_SERVER_BIN);
  for (const dir of (process.env.PATH ?? "").split(delimiter)) if (dir) candidates.push(join(dir, "nats-server"));
  candidates.push("/usr/sbin/nats-server", "/usr/local/bin/nats-server", "/usr/bin/nats-server");
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

/** Ask the kernel for a free loopback port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once the server greets a TCP client with its INFO line. */
async function waitForInfo(port: number, deadlineMs: number, exited: () => string | null): Promise<void> {
  const start = Date.now();
  for (;;) {
    const why = exited();
    if (why) throw new Error(`nats-server exited before accepting connections: ${why}`);
    const ok = await new Promise<boolean>((resolve) => {
      const sock = createConnection({ host: "127.0.0.1", port });
      let buf = "";
      const done = (v: boolean) => {
        sock.destroy();
        resolve(v);
      };
      sock.setTimeout(500, () => done(false));
      sock.on("data", (d) => {
        buf += d.toString("utf8");
        if (buf.startsWith("INFO ")) done(true);
      });
      sock.on("error", () => done(false));
    });
    if (ok) return;
    if (Date.now() - start > deadlineMs) throw new Error(`nats-server did not accept connections on 127.0.0.1:${port} within ${deadlineMs} ms`);
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
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "ensoul-nats-"));
  const storeDir = join(dir, "js");
  const args = ["-a", "127.0.0.1", "-p", String(port), "-n", `ensoul-test-${port}`];
  if (jetstream) args.push("-js", "-sd", storeDir);
  if (opts.config) {
    const configPath = join(dir, "server.conf");
    writeFileSync(configPath, opts.config);
    args.push("-c", configPath);
  }

  let child: ChildProcess | null = null;
  let exitReason: string | null = null;
  let stderrTail = "";

  const start = async () => {
    exitReason = null;
    stderrTail = "";
    const proc = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
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
    await waitForInfo(port, 10_000, () => exitReason);
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

  await start();

  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    get running() {
      return child !== null;
    },
    stop: () => terminate("SIGTERM"),
    kill: () => terminate("SIGKILL"),
    async restart() {
      await terminate("SIGTERM");
      await start();
    },
    async dispose() {
      await terminate("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
