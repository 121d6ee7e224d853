/**
 * Two `npm start` in one clone: the second demo must not run on the first one's data
 * directory (both would commit the same turns of Claudius, and one window's messages would
 * vanish). It stops at once with the holder's pid; `ensoul memory` still reads the live
 * directory; and once the first is killed with SIGKILL, its stale lock does not block a restart.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runEnsoul, startEnsoul, type EnsoulSession } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs("ensoul-lock-");
const sessions: EnsoulSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) {
    s.child.kill("SIGKILL");
    await s.exited;
  }
  dirs.cleanup();
});

const env = { USER: "tom" };

describe("one data directory, two processes", () => {
  it("refuses a second demo with the first one's pid, and a SIGKILLed demo does not block the next", async () => {
    const data = dirs.make();
    const first = startEnsoul(["demo", "--data", data, "--user", "Tom"], { env });
    sessions.push(first);
    await first.waitFor(/memory in /, 30_000);
    first.type("Hello, I'm Tom.");
    await first.waitFor(/^Claudius: /m, 30_000);

    const second = await runEnsoul(["demo", "--data", data, "--user", "Tom"], { lines: ["Am I lost?"], env });
    expect(second.code).not.toBe(0);
    expect(second.stdout).not.toMatch(/^Claudius: /m);
    const line = second.stderr.trim().split("\n").find((l) => l.startsWith("ensoul: "));
    expect(line).toMatch(new RegExp(`^ensoul: data directory ${escape(join(data, "local"))} is in use by process ${first.child.pid} \\(ensoul demo, since `));
    expect(second.stderr).not.toMatch(/\n\s+at /); // one clear line, no stack

    // A command that only reads may look at the live directory.
    const memory = await runEnsoul(["memory", "claudius", "--data", data], { env });
    expect(memory.stderr).not.toMatch(/in use by process/);
    expect(memory.code).toBe(0);

    first.child.kill("SIGKILL");
    await first.exited;
    const third = await runEnsoul(["demo", "--data", data, "--user", "Tom"], { lines: ["Do you remember me?"], env });
    expect(third.stderr).not.toMatch(/in use by process/);
    expect(third.code).toBe(0);
    expect(third.stdout).toMatch(/^Claudius: /m);
  }, 120_000);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
