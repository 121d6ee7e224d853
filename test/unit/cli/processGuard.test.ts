/**
 * `ensoul up`'s process guard, in a child process (an uncaught exception is the process's
 * business, not the test runner's): a failure inside an actor's work is handed to that actor
 * and the process goes on; then one no actor owns is logged with its context and ends the
 * process with 70.
 */
import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";

const repo = new URL("../../..", import.meta.url).pathname;

const script = `
  import { guardProcess } from "./runtime/cli/processGuard.ts";
  import { inActor } from "./runtime/node/index.ts";
  guardProcess({ log: (line) => process.stdout.write("log: " + line + "\\n") });
  const actor = { name: "soul sam", soulId: "sam", failed: (err, how) => process.stdout.write("failed: " + how + ": " + err.message + "\\n") };
  inActor(actor, () => setTimeout(() => { throw new Error("boom in a timer"); }, 0));
  inActor(actor, () => { void Promise.reject(new Error("nobody awaits me")); });
  setTimeout(() => {
    process.stdout.write("still running\\n");
    setTimeout(() => { throw new Error("lost at nats://ops:hunter2@10.0.0.1:4222"); }, 0);
    setTimeout(() => process.stdout.write("never printed\\n"), 200);
  }, 100);
`;

it("hands a failure in an actor's work to the actor and goes on; ends the process with 70 for one no actor owns, said with its context, redacted", () => {
  const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: repo, encoding: "utf8", timeout: 60_000 });
  const { stdout } = child;
  expect(stdout).toMatch(/log: uncaught exception in soul sam: Error: boom in a timer \(at .*\); soul sam is stopped and restarted, the node keeps serving/);
  expect(stdout).toMatch(/failed: uncaught exception: boom in a timer\n/);
  expect(stdout).toMatch(/failed: unhandled rejection: nobody awaits me\n/);
  expect(stdout).toMatch(/still running/);
  expect(stdout).toMatch(/log: uncaught exception that no actor owns: Error: lost at .*; the process exits \(70\)/);
  expect(stdout).not.toMatch(/hunter2/);
  expect(stdout).not.toMatch(/never printed/);
  expect(child.status).toBe(70);
});
