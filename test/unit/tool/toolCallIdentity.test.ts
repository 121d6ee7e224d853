/**
 * A call id names one call for ever, and the ledger answers a call only with its own outcome.
 * A turn run again after a crash may call its tools in another order (a model decides afresh);
 * a failed perception's next turn has the same turn id; two subprocesses of one phase each
 * start counting from nothing. None of that may run a non-idempotent call twice or hand a call
 * the recorded outcome of another tool, or of the same tool with another input.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createSoul, defineSoul, useActions, useTool, type MentalProcess } from "../../../actors/soul/index.ts";
import { createToolRegistry, defineTool, ledgerOf, TurnToolBox, type Tool, type ToolEvent, type ToolTurn } from "../../../actors/tool/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { record, said } from "../../support/soul/helpers.ts";

const env = useTestEnv();

/** Tools whose every run is a side effect written down here, and whose result names the tool, the input and the run. */
function sideEffectTools() {
  const runs: string[] = [];
  const make = (name: string, idempotent: boolean, input: z.ZodType) =>
    defineTool({
      name,
      description: name,
      input,
      idempotent,
      run: (value) => {
        runs.push(`${name} ${JSON.stringify(value)}`);
        return `${name} ${JSON.stringify(value)} #${runs.length}`;
      },
    });
  const tools = [make("notes", false, z.object({ text: z.string() })), make("pay", false, z.object({ amount: z.number() })), make("clock", true, z.object({}))];
  return { tools, runs };
}

function attempt(tools: Tool[], ledgerStore: object, overrides: Partial<ToolTurn> = {}) {
  const events: ToolEvent[] = [];
  const box = new TurnToolBox(createToolRegistry(tools), {
    soulId: "s1",
    turnId: "s1:7",
    turnKey: {},
    causation: "p-1",
    now: () => 0,
    review: (p) => p,
    emit: (e) => events.push(e),
    ledger: ledgerOf(ledgerStore),
    ...overrides,
  });
  return { box, events };
}

describe("a turn run again after a crash", () => {
  it("gets each call's own recorded outcome when the model calls the tools in another order", async () => {
    const { tools, runs } = sideEffectTools();
    const store = env.actor("s1");
    const first = attempt(tools, store);
    const noted = await first.box.invoke("notes", { text: "a" });
    const paid = await first.box.invoke("pay", { amount: 5 });
    // The re-run: pay first, then notes.
    const again = attempt(tools, store);
    expect(await again.box.invoke("pay", { amount: 5 })).toBe(paid);
    expect(await again.box.invoke("notes", { text: "a" })).toBe(noted);
    expect(runs).toEqual(['notes {"text":"a"}', 'pay {"amount":5}']);
    expect(again.events.map((e) => (e.type === "tool.result" ? `${e.tool} ${e.outcome}` : e.type))).toEqual(["pay replayed", "notes replayed"]);
  });

  it("does not run a non-idempotent call again that moved to another position", async () => {
    const { tools, runs } = sideEffectTools();
    const store = env.actor("s1");
    const first = attempt(tools, store);
    await first.box.invoke("clock", {});
    const paid = await first.box.invoke("pay", { amount: 5 });
    const again = attempt(tools, store);
    expect(await again.box.invoke("pay", { amount: 5 })).toBe(paid);
    await again.box.invoke("clock", {});
    expect(runs.filter((r) => r.startsWith("pay"))).toEqual(['pay {"amount":5}']);
  });

  it("runs a call the crashed attempt did not make, and counts repeats of one call apart", async () => {
    const { tools, runs } = sideEffectTools();
    const store = env.actor("s1");
    const first = attempt(tools, store);
    const once = await first.box.invoke("pay", { amount: 5 });
    const again = attempt(tools, store);
    await again.box.invoke("pay", { amount: 7 });
    expect(await again.box.invoke("pay", { amount: 5 })).toBe(once);
    // A second payment of 5 in the same turn is another call: it runs.
    expect(await again.box.invoke("pay", { amount: 5 })).not.toBe(once);
    expect(runs).toEqual(['pay {"amount":5}', 'pay {"amount":7}', 'pay {"amount":5}']);
  });

  it("knows a call by the input the tool's schema reads, not by how the model wrote it", async () => {
    const { tools, runs } = sideEffectTools();
    const store = env.actor("s1");
    const first = attempt(tools, store);
    const paid = await first.box.invoke("pay", { amount: 5 });
    // The re-run writes a key the schema drops, and its keys in another order.
    const again = attempt(tools, store);
    expect(await again.box.invoke("pay", { note: "again", amount: 5 })).toBe(paid);
    expect(runs).toEqual(['pay {"amount":5}']);
  });

  it("does not replay a call whose input the gates changed differently this time: neither replayed nor run", async () => {
    const { tools, runs } = sideEffectTools();
    const store = env.actor("s1");
    // A gate that rounds amounts by a rule that changed between the attempts.
    const rounding = (step: number): ToolTurn["review"] => (p) => ({ ...p, data: { ...p.data, input: { amount: Math.ceil((p.data?.input as { amount: number }).amount / step) * step } } });
    const first = attempt(tools, store, { review: rounding(10) });
    expect(await first.box.invoke("pay", { amount: 5 })).toBe('pay {"amount":10} #1');
    const again = attempt(tools, store, { review: rounding(100) });
    await expect(again.box.invoke("pay", { amount: 5 })).rejects.toThrow(/was recorded with another input: neither replayed nor run again/);
    expect(runs).toEqual(['pay {"amount":10}']);
  });
});

describe("a call id names one call", () => {
  it("the next perception's turn, which has the same turn id, runs its own calls, not the failed one's results", async () => {
    const { tools, runs } = sideEffectTools();
    const store = env.actor("s1");
    const failed = attempt(tools, store, { causation: "p-failed" });
    await failed.box.invoke("pay", { amount: 5 });
    const next = attempt(tools, store, { causation: "p-next" });
    expect(await next.box.invoke("pay", { amount: 5 })).toBe('pay {"amount":5} #2');
    expect(runs).toHaveLength(2);
    const ids = [...failed.events, ...next.events].flatMap((e) => (e.type === "tool.call" ? [e.callId] : []));
    expect(new Set(ids).size).toBe(2);
  });

  it("two subprocesses of one phase calling a non-idempotent tool each run their own call", async () => {
    const { tools, runs } = sideEffectTools();
    const heard: string[] = [];
    const pays = (amount: number): MentalProcess => async ({ workingMemory }) => {
      heard.push(await useTool<{ amount: number }, string>("pay")({ amount }));
      return workingMemory;
    };
    const main: MentalProcess = async ({ workingMemory }) => {
      useActions().speak("ok");
      return workingMemory;
    };
    const blueprint = defineSoul({ name: "Payer", persona: "pays", initialProcess: main, processes: { main }, subprocesses: { first: pays(1), second: pays(2) } });
    const soul = createSoul({ blueprint, id: "payer", store: env.actor("payer"), services: { tools: createToolRegistry(tools) } });
    const log = record(soul);
    await soul.perceive(said("go"));
    await soul.idle();
    await expect.poll(() => heard.length).toBe(2);
    expect(runs).toEqual(['pay {"amount":1}', 'pay {"amount":2}']);
    expect(heard).toEqual(['pay {"amount":1} #1', 'pay {"amount":2} #2']);
    expect(log.errors()).toEqual([]);
    await soul.stop();
  });
});
