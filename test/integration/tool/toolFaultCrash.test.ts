/**
 * A real process killed (SIGKILL, by `ENSOUL_FAULTS`) at each boundary of a non-idempotent
 * call: before its started record, after it, after the tool ran, after its outcome was
 * recorded. The soul is then opened again from its LMDB and its perception's turn runs again,
 * the model now calling the tools in the reverse order. Whatever the point: no non-idempotent
 * tool ran twice for the perception, each call got its own outcome (replayed, run now if it
 * never started, or unknown if it was under way), and the perception was answered once.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, it } from "vitest";
import { createSoul } from "../../../actors/soul/index.ts";
import type { FaultRule } from "../../../runtime/faults/index.ts";
import { openTestEnv } from "../../support/soul/env.ts";
import { record } from "../../support/soul/helpers.ts";
import { toolOrderBlueprint, toolOrderTools } from "../../support/tool/toolOrderSoul.ts";

const child = fileURLToPath(new URL("../../support/tool/toolOrderChild.ts", import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Runs the forward-order turn in a child with `rules`; resolves once a fault has killed it. */
async function crashIn(dir: string, sideEffects: string, rules: FaultRule[]): Promise<NodeJS.Signals | null> {
  const proc = spawn(process.execPath, ["--import", "tsx", child, join(dir, "data"), "payer", sideEffects, "forward"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ENSOUL_FAULTS: JSON.stringify(rules) },
  });
  let out = "";
  proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => proc.on("exit", (_code, s) => resolve(s)));
  if (signal !== "SIGKILL") throw new Error(`the child was not killed at its fault point: ${out}`);
  return signal;
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean) : []);

const cases: { at: string; rules: FaultRule[]; pay: string; payRuns: string }[] = [
  { at: "before pay's started record", rules: [{ point: "tool.record", match: { tool: "pay", state: "started" }, fault: { kind: "crash" } }], pay: "pay: paid 5", payRuns: "once" },
  { at: "after pay's started record", rules: [{ point: "tool.record", match: { tool: "pay", state: "started" }, fault: { kind: "crash", after: true } }], pay: "pay: ToolOutcomeUnknownError", payRuns: "never" },
  { at: "after pay ran", rules: [{ point: "tool.call", match: { tool: "pay" }, fault: { kind: "crash", after: true } }], pay: "pay: ToolOutcomeUnknownError", payRuns: "once" },
  { at: "after pay's outcome was recorded", rules: [{ point: "tool.record", match: { tool: "pay", state: "done" }, fault: { kind: "crash", after: true } }], pay: "pay: paid 5", payRuns: "once" },
];

describe("a process killed at a boundary of a non-idempotent tool call, its turn run again in another order", () => {
  it.concurrent.for(cases)("$at: pay ran $payRuns, notes once, each call got its own outcome", { timeout: 60_000 }, async ({ rules, pay, payRuns }, { expect }) => {
    const dir = mkdtempSync(join(tmpdir(), "ensoul-tool-fault-"));
    dirs.push(dir);
    const sideEffects = join(dir, "side-effects.log");
    await crashIn(dir, sideEffects, rules);
    const crashed = lines(sideEffects);

    const env = await openTestEnv(join(dir, "data"));
    const soul = createSoul({ blueprint: toolOrderBlueprint("reverse"), id: "payer", store: env.actor("payer"), services: { tools: toolOrderTools(sideEffects) } });
    const log = record(soul);
    await soul.idle();
    await expect.poll(() => log.said()).toHaveLength(1);
    expect(log.said()).toEqual([["clock: noon", "notes: noted first", pay].sort().join(" | ")]);

    // What ran, for the one perception, across both processes: notes once, pay at most once, each under one id.
    const ran = lines(sideEffects);
    expect(ran.filter((l) => l.startsWith("notes first "))).toHaveLength(1);
    expect(ran.filter((l) => l.startsWith("pay 5 "))).toHaveLength(payRuns === "once" ? 1 : 0);
    expect(ran.slice(0, crashed.length)).toEqual(crashed);
    // Each call of the re-run has the id its call had in the crashed run, though it came in another order.
    const outcomes = log.events.flatMap((e) => (e.type === "tool.result" || e.type === "tool.unknown" ? [`${e.tool} ${e.type === "tool.unknown" ? "unknown" : e.outcome} ${e.callId}`] : []));
    const idOf = (prefix: string) => crashed.find((l) => l.startsWith(prefix))?.split(" ")[2];
    expect(outcomes).toContain(`notes replayed ${idOf("notes first ")}`);
    const paid = idOf("pay 5 ");
    if (pay.endsWith("ToolOutcomeUnknownError")) expect(outcomes).toContainEqual(expect.stringMatching(new RegExp(`^pay unknown ${paid ?? "\\S+"}$`)));
    else if (paid !== undefined) expect(outcomes).toContain(`pay replayed ${paid}`);
    else expect(outcomes).toContainEqual(expect.stringMatching(/^pay ok \S+$/));
    expect(env.actor("payer").inboxEntry("p-pay")).toMatchObject({ status: "done" });
    await soul.stop();
    await env.close();
  });
});
