/**
 * One default data directory for every command: after `npm start` (the demo), `ensoul chat
 * claudius` and `ensoul memory claudius` run in the same directory, with no --data, and meet
 * the Claudius the demo talked to, not a stranger. Each run is the real binary in a temp
 * working directory, so the defaults are what decides where LMDB lands.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runEnsoul } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs("ensoul-default-data-");
afterEach(() => dirs.cleanup());

describe("the default data directory", () => {
  it("is shared by demo, chat and memory: chat continues the demo's Claudius, memory shows both", async () => {
    const cwd = dirs.make();
    const run = (args: string[], lines: string[] = []) => runEnsoul(args, { lines, cwd, env: { USER: "tom" }, timeoutMs: 60_000 });

    const demo = await run(["demo", "--user", "Tom"], ["Hello, I'm Tom.", "I restore hand planes."]);
    expect(demo.stderr).not.toMatch(/Error|error:/);
    expect(demo.code).toBe(0);

    const chat = await run(["chat", "claudius", "--as", "Tom"], ["Do you remember my hobby?"]);
    expect(chat.stderr).not.toMatch(/Error|error:/);
    expect(chat.code).toBe(0);
    // Its banner names the one place the memory is kept.
    expect(chat.stdout).toContain(join(cwd, ".ensoul", "local"));

    const memory = await run(["memory", "claudius"]);
    expect(memory.stderr).toBe("");
    expect(memory.code).toBe(0);
    // Two turns of the demo and one of the chat, in one conversation.
    expect(memory.stdout.split("\n")[0]).toMatch(/^soul claudius on node local · process \w+ · 3 turns · /);
    expect(memory.stdout).toContain("I restore hand planes.");
    expect(memory.stdout).toContain("Do you remember my hobby?");
    // Nothing was written beside it.
    expect(existsSync(join(cwd, ".ensoul", "data.mdb"))).toBe(false);
  }, 120_000);
});
