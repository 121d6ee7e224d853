import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  createSoul,
  defineSoul,
  useActions,
  usePerceptions,
  useProcessMemory,
  useSoulMemory,
  type MentalProcess,
  type Proposal,
} from "../../../actors/soul/index.ts";
import { crashBlueprint } from "../../support/soul/crashBlueprint.ts";
import { openTestEnv, useTestEnv } from "../../support/soul/env.ts";
import { record, said } from "../../support/soul/helpers.ts";

const env = useTestEnv();

describe("a process that throws", () => {
  it("commits nothing of its turn, leaves the perception in the inbox with its error, and the soul goes on", async () => {
    let fragile!: MentalProcess;
    const steady: MentalProcess = async ({ workingMemory }) => {
      useActions().speak(`steady ${usePerceptions().invokingPerception.content}`);
      return workingMemory;
    };
    fragile = async ({ workingMemory }) => {
      const content = usePerceptions().invokingPerception.content;
      useSoulMemory("touched", 0).current += 1;
      useProcessMemory("").current = content;
      useActions().speak(`fragile ${content}`);
      useActions().scheduleEvent({ in: 10, process: steady, perception: { action: "tick", content: "t" } });
      if (content === "boom") throw new Error("the process broke");
      return [workingMemory.withMonologue(`handled ${content}`), steady];
    };
    const blueprint = defineSoul({
      name: "F",
      persona: "",
      initialProcess: fragile,
      processes: { fragile: { process: fragile, next: ["steady"] }, steady },
    });
    const soul = createSoul({ blueprint, id: "f", store: env.actor("f") });
    const log = record(soul);
    const boom = await soul.perceive(said("boom"));
    const next = await soul.perceive(said("fine"));
    await soul.idle();

    const store = env.actor("f");
    // The error with where the soul's code threw it (the `throw` above, in this file).
    expect(store.inboxEntry(boom.id)).toMatchObject({ status: "error", error: expect.stringMatching(/^the process broke at test\/unit\/soul\/crash\.test\.ts:\d+:\d+$/) });
    expect(store.inboxEntry(next.id)).toMatchObject({ status: "done" });
    expect(log.events.find((e) => e.type === "error")).toMatchObject({ phase: "process", process: "fragile", perceptionId: boom.id });
    const state = store.loadState();
    expect(state).toMatchObject({ turn: 1, currentProcess: "steady", soulMemory: { touched: 1 }, processMemory: { fragile: ["fine"] } });
    expect(JSON.stringify(state?.workingMemory)).not.toContain("boom");
    expect(store.schedules()).toHaveLength(1);
    expect(log.said()).toEqual(["fragile fine"]);
    expect(store.pendingOutbox()).toEqual([]);
    await soul.stop();
  });
});

const crashChild = fileURLToPath(new URL("../../support/soul/crashChild.ts", import.meta.url));

/** Runs the crash child until it is inside its second turn, then kills it with SIGKILL. */
async function killMidTurn(dir: string, soulId: string): Promise<string> {
  const child = spawn(process.execPath, ["--import", "tsx", crashChild, dir, soulId], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("IN_TURN") && out.includes("ACCEPTED")) resolve();
    });
    child.on("exit", () => reject(new Error(`crash child exited before its turn: ${out}${err}`)));
  });
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");
  return out;
}

describe("a process killed with SIGKILL during a turn", () => {
  it("restarts at the last committed turn, processes the in-flight perception exactly once and re-delivers speech with the same ids", async () => {
    // The test opens the directory only after the child's life: one process at a time holds it.
    const dir = mkdtempSync(join(tmpdir(), "ensoul-soul-crash-"));
    const out = await killMidTurn(dir, "crashy");
    expect(out).toContain("TURN 1");
    const crashEnv = await openTestEnv(dir);

    const store = crashEnv.actor("crashy");
    expect(store.loadState()).toMatchObject({ turn: 1, soulMemory: { turns: 1 }, currentProcess: "main" });
    expect(store.pendingInbox().map((e) => e.id)).toEqual(["p-slow"]);
    expect(store.pendingOutbox().map((e) => e.id)).toEqual(["crashy:1:0"]);

    const runs: string[] = [];
    const delivered: Proposal[] = [];
    const outlet = { deliver: (p: Proposal) => void delivered.push(p) };
    const soul = createSoul({ blueprint: crashBlueprint({ onRun: (c) => runs.push(c) }), id: "crashy", store, outlet });
    await soul.idle();
    expect(runs).toEqual(["slow"]);
    expect(delivered.map((p) => [p.id, p.content])).toEqual([
      ["crashy:1:0", "reply 1 to hello"],
      ["crashy:2:0", "reply 2 to slow"],
    ]);
    expect(store.inboxEntry("p-slow")).toMatchObject({ status: "done" });
    expect(store.loadState()).toMatchObject({ turn: 2, soulMemory: { turns: 2 } });
    await soul.stop();

    // A second restart finds nothing left to do.
    await crashEnv.reopen();
    const again = createSoul({ blueprint: crashBlueprint({ onRun: (c) => runs.push(c) }), id: "crashy", store: crashEnv.actor("crashy"), outlet });
    await again.idle();
    expect(runs).toEqual(["slow"]);
    expect(delivered).toHaveLength(2);
    await again.stop();
    await crashEnv.close();
  });
});
