/**
 * `ensoul up`'s process guard, in child processes (an uncaught exception is the process's
 * business, not the test runner's): a failure inside an actor's work is handed to that actor
 * and the process goes on; one no actor owns is logged with its context and ends the process
 * with 70.
 */
import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";

const repo = new URL("../../..", import.meta.url).pathname;

function run(body: string): { status: number | null; stdout: string } {
  const script = `
    import { guardProcess } from "./runtime/cli/processGuard.ts";
    import { inActor } from "./runtime/node/index.ts";
    guardProcess({ log: (line) => process.stdout.write("log: " + line + "\\n") });
    const actor = { name: "soul sam", soulId: "sam", failed: (err, how) => process.stdout.write("failed: " + how + ": " + err.message + "\\n") };
    ${body}
    setTimeout(() => process.stdout.write("still running\\n"), 100);
  `;
  const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: repo, encoding: "utf8", timeout: 30_000 });
  return { status: child.status, stdout: child.stdout };
}

it("hands an exception thrown, or a rejection left unhandled, in an actor's work to that actor, and the process goes on", () => {
  const { status, stdout } = run(`
    inActor(actor, () => setTimeout(() => { throw new Error("boom in a timer"); }, 0));
    inActor(actor, () => { void Promise.reject(new Error("nobody awaits me")); });
  `);
  expect(stdout).toMatch(/log: uncaught exception in soul sam: Error: boom in a timer \(at .*\); soul sam is stopped and restarted, the node keeps serving/);
  expect(stdout).toMatch(/failed: uncaught exception: boom in a timer\n/);
  expect(stdout).toMatch(/failed: unhandled rejection: nobody awaits me\n/);
  expect(stdout).toMatch(/still running/);
  expect(status).toBe(0);
});

it("ends the process with 70 for what no actor owns, saying what it was (credentials redacted)", () => {
  const { status, stdout } = run(`setTimeout(() => { throw new Error("lost at nats://ops:hunter2@10.0.0.1:4222"); }, 0);`);
  expect(stdout).toMatch(/log: uncaught exception that no actor owns: Error: lost at .*; the process exits \(70\)/);
  expect(stdout).not.toMatch(/hunter2/);
  expect(stdout).not.toMatch(/still running/);
  expect(status).toBe(70);
});
