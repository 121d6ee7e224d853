/**
 * `ensoul dev [soul|config]`: runs a soul (`ensoul chat <soul>`) or a cluster (`ensoul up
 * <config>`) and runs it again when its code changes, as `soul-engine dev` did. Memory lives in
 * LMDB, so the soul goes on where it was: only the code is new.
 *
 * The soul runs in a child process: ES modules cannot be unloaded, and a soul's imports of
 * `ensoul` must be the runtime's own modules, so a fresh process is the one clean way to run
 * new code. Before a restart, the new code is loaded once in a checking process: a syntax error
 * (or a module that is no longer a soul) is shown, and the last good version keeps running.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, statSync, watch, type FSWatcher } from "node:fs";
import { dirname, extname, resolve } from "node:path";
import { CliError } from "./CliError.ts";

const CONFIG_EXTENSIONS = [".yaml", ".yml", ".json"];
const DEBOUNCE_MS = 150;
const IGNORED = /(^|[\\/])(node_modules|\.ensoul|\.git|dist)([\\/]|$)/;

export interface DevOptions {
  data?: string;
  /** Called with each line dev itself prints (default: stderr). */
  note?: (line: string) => void;
}

/** What to run: a cluster config (`up`) or a soul (`chat`), and the folder whose changes count. */
function plan(target: string): { command: "up" | "chat"; watchDir: string } {
  const path = resolve(target);
  const isConfig = CONFIG_EXTENSIONS.includes(extname(path)) || /ensoul\.config\.[mc]?[jt]s$/.test(path);
  if (isConfig) return { command: "up", watchDir: dirname(path) };
  if (!existsSync(path)) throw new CliError(`${target}: no such soul or config (ensoul dev ./souls/ada, or ensoul dev ensoul.yaml)`);
  return { command: "chat", watchDir: statSync(path).isDirectory() ? path : dirname(path) };
}

/** Loads the code in a separate process: resolves to undefined when it is good, else to the error it shows. */
function check(bin: string, command: "up" | "chat", target: string): Promise<string | undefined> {
  return new Promise((resolveCheck) => {
    const child = spawn(process.execPath, [bin, "dev-check", command === "up" ? "--config" : "--soul", target], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("close", (code) => resolveCheck(code === 0 ? undefined : err.trim() || `exited with ${code}`));
  });
}

export async function devCommand(target: string, options: DevOptions = {}): Promise<void> {
  const note = options.note ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const bin = process.argv[1] as string;
  const { command, watchDir } = plan(target);
  const args = [bin, command, target, ...(options.data !== undefined ? ["--data", options.data] : [])];
  let child: ChildProcess | undefined;
  let restarting = false;
  let stopping = false;
  let finished!: (code: number) => void;
  const done = new Promise<number>((r) => (finished = r));

  const start = () => {
    const c = spawn(process.execPath, args, { stdio: ["inherit", "inherit", "pipe"] });
    // The child's own "SIGTERM, finishing the turn" is dev's restart, not the user's signal.
    c.stderr?.on("data", (d: Buffer) => {
      const text = d.toString().split("\n").filter((l) => !(restarting && /^ensoul (chat|up): SIGTERM, /.test(l))).join("\n");
      if (text.trim()) process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
    });
    c.on("exit", (code) => {
      if (child !== c) return;
      child = undefined;
      if (!restarting) finished(code ?? 1);
    });
    child = c;
  };

  const reload = async (file: string) => {
    const problem = await check(bin, command, target);
    if (problem) return note(`ensoul dev: ${file} changed, but the new code does not load; the last good version keeps running:\n${problem}`);
    note(`ensoul dev: ${file} changed: reloading (memory kept)`);
    restarting = true;
    const old = child;
    if (old) {
      const exited = new Promise((r) => old.once("exit", r));
      old.kill("SIGTERM");
      await exited;
    }
    restarting = false;
    if (!stopping) start();
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  let queue = Promise.resolve();
  const watcher: FSWatcher = watch(watchDir, { recursive: true }, (_event, name) => {
    const file = String(name ?? "");
    if (!file || IGNORED.test(file)) return;
    clearTimeout(timer);
    timer = setTimeout(() => (queue = queue.then(() => reload(file))), DEBOUNCE_MS);
  });
  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    child?.kill(signal);
    if (!child) finished(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  note(`ensoul dev: running ensoul ${command} ${target}; watching ${watchDir} for changes`);
  start();
  try {
    const code = await done;
    if (code !== 0) throw new CliError(`ensoul ${command} exited with ${code}`, code);
  } finally {
    watcher.close();
    clearTimeout(timer);
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

/** `ensoul dev-check`: loads a soul or a config as dev would run it, and says why not. */
export async function devCheckCommand(opts: { soul?: string; config?: string }): Promise<void> {
  const node = await import("../node/index.ts");
  if (opts.config !== undefined) await node.loadClusterConfig(opts.config);
  else if (opts.soul !== undefined && node.isSoulPath(opts.soul)) await node.loadSoulModule(opts.soul);
}
