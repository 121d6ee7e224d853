/**
 * Runs the real `ensoul` binary as a user would: a child process with stdin piped, an
 * environment the test chooses (so no keys from the developer's shell leak in), and a hard
 * time limit so a hung command fails the test instead of the suite.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";

export const repoRoot = join(import.meta.dirname, "..", "..", "..");
export const ensoulBin = join(repoRoot, "bin", "ensoul.js");

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runEnsoul(
  args: string[],
  opts: { lines?: string[]; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ensoulBin, ...args], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 45_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end((opts.lines ?? []).map((l) => `${l}\n`).join(""));
  });
}
