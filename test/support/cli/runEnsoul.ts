/**
 * Runs the real `ensoul` binary as a user would: a child process with stdin piped, an
 * environment the test chooses (so no keys from the developer's shell leak in), and a hard
 * time limit so a hung command fails the test instead of the suite.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";

export const repoRoot = join(import.meta.dirname, "..", "..", "..");
export const ensoulBin = join(repoRoot, "bin", "ensoul.js");

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  lines?: string[];
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Where the command runs (default: the repository), e.g. a temp directory to see where defaults land. */
  cwd?: string;
}

export function runEnsoul(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const session = startEnsoul(args, opts);
  session.child.stdin.end((opts.lines ?? []).map((l) => `${l}\n`).join(""));
  return session.exited;
}

/** A command still running: its stdin stays open, so a test can type, wait and send signals. */
export interface EnsoulSession {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Writes one line to its stdin. */
  type(line: string): void;
  /** Resolves once stdout or stderr matches (already or later); rejects if it exits first or after `ms`. */
  waitFor(pattern: RegExp, ms?: number): Promise<void>;
  /** The exit: `code` is null when a signal ended it. */
  readonly exited: Promise<RunResult>;
}

export function startEnsoul(args: string[], opts: Omit<RunOptions, "lines"> = {}): EnsoulSession {
  const child = spawn(process.execPath, [ensoulBin, ...args], {
    cwd: opts.cwd ?? repoRoot,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...opts.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const watchers = new Set<() => void>();
  const changed = () => {
    for (const w of watchers) w();
  };
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
    changed();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    changed();
  });
  // A test that closes stdin early (or a child that exits first) must not fail on EPIPE here.
  child.stdin.on("error", () => undefined);
  const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 45_000);
  let done = false;
  const exited = new Promise<RunResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      done = true;
      changed();
      resolve({ code, stdout, stderr });
    });
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    type: (line) => void child.stdin.write(`${line}\n`),
    waitFor(pattern, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(stdout) || pattern.test(stderr)) finish();
          else if (done) finish(new Error(`ensoul ${args.join(" ")} exited before printing ${pattern}:\n${stdout}\n${stderr}`));
        };
        const finish = (err?: Error) => {
          watchers.delete(check);
          clearTimeout(timeout);
          if (err) reject(err);
          else resolve();
        };
        const timeout = setTimeout(() => finish(new Error(`no ${pattern} within ${ms} ms from ensoul ${args.join(" ")}:\n${stdout}\n${stderr}`)), ms);
        watchers.add(check);
        check();
      });
    },
    exited,
  };
}
