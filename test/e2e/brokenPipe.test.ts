/**
 * `ensoul memory claudius | head`: the reader goes away before the command has written
 * everything. Every command then stops writing and exits quietly, with no EPIPE stack trace.
 * The real binary, with its stdout a pipe whose reading end the test closes (as `head` does
 * once it has its lines), and once through a real shell pipe into `head`.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensoulBin, repoRoot, runEnsoul, startEnsoul } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs("ensoul-epipe-");
let data: string;

beforeAll(async () => {
  data = dirs.make();
  // Long lines make a long working memory: more than a pipe holds, so `head` leaves most of it unread.
  const lines = Array.from({ length: 40 }, (_, i) => `line ${i}: ${"the quick brown fox jumps over the lazy dog ".repeat(100)}`);
  const chat = await runEnsoul(["chat", "samantha", "--data", data], { lines, timeoutMs: 60_000 });
  expect(chat.code).toBe(0);
}, 90_000);
afterAll(() => dirs.cleanup());

/** Runs a command whose stdout nobody reads: its reading end is closed before the first write. */
async function withStdoutClosed(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const session = startEnsoul(args, { timeoutMs: 30_000 });
  session.child.stdout.destroy();
  session.child.stdin.end();
  const { code, stderr } = await session.exited;
  return { code, stderr };
}

describe("a reader that goes away (EPIPE on stdout)", () => {
  it.each([
    ["memory", ["memory", "samantha", "--json"]],
    ["memory (text)", ["memory", "samantha"]],
    ["nats-config", ["nats-config", "--cluster", "demo", "--user", "node-a:role=node"]],
    ["--help", ["--help"]],
  ])("`ensoul %s` exits 0 without a stack trace", async (_name, args) => {
    const withData = args[0] === "memory" ? [...args, "--data", data] : args;
    const { code, stderr } = await withStdoutClosed(withData);
    expect(stderr).not.toMatch(/EPIPE|Error|    at /);
    expect(code).toBe(0);
  }, 40_000);

  it("`ensoul memory samantha --json | head -c 100` prints the head and nothing on stderr", async () => {
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const cmd = `"${process.execPath}" "${ensoulBin}" memory samantha --json --data "${data}" | head -c 100; echo " pipe status: \${PIPESTATUS[0]}" 1>&2`;
      const child = spawn("bash", ["-c", cmd], { cwd: repoRoot, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect(result.stdout).toHaveLength(100);
    expect(result.stdout.startsWith("{")).toBe(true);
    expect(result.stderr.trim()).toBe("pipe status: 0");
  }, 40_000);
});
