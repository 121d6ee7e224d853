/**
 * A process killed with SIGKILL in the middle of a non-idempotent tool call: after restart the
 * perception's turn runs again and makes the same calls, so the same call ids. The call that
 * finished before the crash returns its recorded result without running again; the one that
 * was under way is reported unknown (an event and an error the process sees), never re-run;
 * the idempotent tool runs again.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createSoul } from "../../../actors/soul/index.ts";
import { openTestEnv } from "../../support/soul/env.ts";
import { record } from "../../support/soul/helpers.ts";
import { toolCrashBlueprint, toolCrashTools } from "../../support/tool/toolCrashSoul.ts";

const child = fileURLToPath(new URL("../../support/tool/toolCrashChild.ts", import.meta.url));

async function killInTool(dir: string, soulId: string, sideEffects: string): Promise<void> {
  const proc = spawn(process.execPath, ["--import", "tsx", child, dir, soulId, sideEffects], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.on("exit", (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    proc.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("IN_TOOL")) resolve();
    });
    proc.on("exit", () => reject(new Error(`tool crash child exited before its tool call: ${out}${err}`)));
  });
  proc.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");
}

describe("a crash in the middle of a turn that called a non-idempotent tool", () => {
  it("does not run the call again after recovery: a finished call is replayed, the unfinished one is reported unknown", { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "ensoul-tool-crash-"));
    const sideEffects = join(dir, "side-effects.log");
    await killInTool(join(dir, "data"), "noter", sideEffects);
    const crashed = readFileSync(sideEffects, "utf8");
    const [first, second] = crashed.split("\n").map((line) => line.split(" ")[0]);
    expect(crashed).toBe(`${first} first\n${second} second\n`);
    expect(first).not.toBe(second);

    const env = await openTestEnv(join(dir, "data"));
    let clockRuns = 0;
    const soul = createSoul({
      blueprint: toolCrashBlueprint,
      id: "noter",
      store: env.actor("noter"),
      services: { tools: toolCrashTools({ sideEffects, onClock: () => clockRuns++ }) },
    });
    const log = record(soul);
    await soul.idle();
    expect(log.said()).toEqual([
      `noted first | ToolOutcomeUnknownError: unknown: the call ${second} of tool notes was made before a crash and its result is not known (not run again: the tool is not idempotent) | noon`,
    ]);
    // Nothing of notes ran again: the side effects are still the two lines of the crashed run.
    expect(readFileSync(sideEffects, "utf8")).toBe(crashed);
    expect(clockRuns).toBe(1);
    const outcomes = log.events.flatMap((e) => (e.type === "tool.result" ? [`${e.callId} ${e.outcome}`] : e.type === "tool.unknown" ? [`${e.callId} unknown`] : []));
    expect(outcomes).toEqual([`${first} replayed`, `${second} unknown`, expect.stringMatching(/^noter:tool:\S+ ok$/)]);
    expect(env.actor("noter").inboxEntry("p-write")).toMatchObject({ status: "done" });
    await soul.stop();
    await env.close();
  });
});
