/**
 * The real `ensoul` binary in child processes: long-running nodes (`ensoul up`) whose output
 * a test can wait on and which it can kill, and one-shot commands with their exit code and
 * output.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { until } from "./busWatch.ts";

export const repoRoot = join(import.meta.dirname, "..", "..", "..");
export const ensoulBin = join(repoRoot, "bin", "ensoul.js");

/** Only what the test chooses: no provider keys or NATS settings from the developer's shell. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...extra };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runEnsoul(args: string[], opts: { env?: Record<string, string>; stdin?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ensoulBin, ...args], { cwd: repoRoot, env: cleanEnv(opts.env), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.stdin ?? "");
  });
}

export interface NodeProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  output(): string;
  /** Resolves once the output matches (already or later). */
  waitFor(pattern: RegExp, ms?: number): Promise<void>;
  kill(signal: NodeJS.Signals): Promise<number | null>;
  readonly exited: Promise<number | null>;
}

const live = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** `ensoul up <args>` in a child process, with its status printed a line per change. */
export function spawnNode(args: string[], env: Record<string, string> = {}): NodeProcess {
  const child = spawn(process.execPath, [ensoulBin, "up", "--status", "lines", ...args], { cwd: repoRoot, env: cleanEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  live.add(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code, signal) => {
      live.delete(child);
      resolve(code ?? (signal ? 128 : null));
    }),
  );
  return {
    child,
    pid: child.pid as number,
    output: () => out,
    async waitFor(pattern, ms = 20_000) {
      await until(() => pattern.test(out) || child.exitCode !== null, ms, `${pattern} in the output of ensoul up ${args.join(" ")}:\n${out}`);
      if (!pattern.test(out)) throw new Error(`ensoul up ${args.join(" ")} exited (${child.exitCode}) before printing ${pattern}:\n${out}`);
    },
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    exited,
  };
}
