/**
 * The tool box a turn gives cognition, without a soul: specs as JSON schema, outcomes instead
 * of throws, and the ledger rules for a turn re-run after a crash (a finished call returns its
 * recorded result, a started non-idempotent call is unknown and not re-run, an idempotent one
 * runs again).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { intercept } from "../../../actors/gate/index.ts";
import { createToolRegistry, defineTool, inputDigest, ledgerOf, toolCallId, ToolOutcomeUnknownError, TurnToolBox, type ToolEvent, type ToolTurn } from "../../../actors/tool/index.ts";

function counting(idempotent: boolean) {
  const calls: string[] = [];
  const tool = defineTool({ name: idempotent ? "clock" : "notes", description: "d", input: z.object({ text: z.string().optional() }), idempotent, run: (_i, ctx) => (calls.push(ctx.callId), calls.length) });
  return { tool, calls };
}

function box(tools: ReturnType<typeof counting>["tool"][], store: object, events: ToolEvent[], overrides: Partial<ToolTurn> = {}) {
  return new TurnToolBox(createToolRegistry(tools), {
    soulId: "s1",
    turnId: "s1:7",
    turnKey: {},
    now: () => 0,
    review: (p) => p,
    emit: (e) => events.push(e),
    ledger: ledgerOf(store),
    ...overrides,
  });
}

describe("TurnToolBox", () => {
  it("gives specs with JSON schema and turns refusals into outcomes the model is told", async () => {
    const { tool } = counting(true);
    const events: ToolEvent[] = [];
    const tb = box([tool], {}, events, { review: (p) => (p.data?.tool === "clock" ? intercept("no clocks today") : p) });
    expect(tb.specs()).toEqual([{ name: "clock", description: "d", inputSchema: expect.objectContaining({ type: "object" }) }]);
    expect(() => tb.specs(["nope"])).toThrow(/no tool named "nope"/);
    expect(await tb.call("clock", {})).toEqual({ ok: false, value: "call of tool clock was rejected: no clocks today" });
    expect(await tb.call("clock", { text: 3 })).toMatchObject({ ok: false, value: expect.stringContaining("invalid input for tool clock") });
  });

  it("a gate that throws blocks the call (fail closed)", async () => {
    const { tool, calls } = counting(true);
    const tb = box([tool], {}, [], {
      review: () => {
        throw new Error("gate down");
      },
    });
    expect(await tb.call("clock", {})).toEqual({ ok: false, value: "call of tool clock was rejected: review failed: gate down" });
    expect(calls).toEqual([]);
  });

  it("after a crash: a finished call returns its recorded result, a started non-idempotent one is unknown, an idempotent one runs again", async () => {
    const store = {};
    const notes = counting(false);
    const clock = counting(true);
    // The crashed run (turn s1:7 answering p-1): notes {} finished, notes {text: "b"} started and never finished.
    const id = (input: unknown) => toolCallId({ soulId: "s1", perceptionId: "p-1", phase: "turn", tool: "notes", input: inputDigest(input), occurrence: 0 });
    const ledger = ledgerOf(store);
    await ledger.put(id({}), { state: "done", tool: "notes", input: inputDigest({}), ts: 0, ok: true, value: "saved" });
    await ledger.put(id({ text: "b" }), { state: "started", tool: "notes", input: inputDigest({ text: "b" }), ts: 0 });
    const events: ToolEvent[] = [];
    const tb = box([notes.tool, clock.tool], store, events, { causation: "p-1" });
    // The re-run calls them in another order, and the clock first.
    expect(await tb.invoke("clock", {})).toBe(1);
    await expect(tb.invoke("notes", { text: "b" })).rejects.toBeInstanceOf(ToolOutcomeUnknownError);
    expect(await tb.invoke("notes", {})).toBe("saved");
    expect(notes.calls).toEqual([]);
    expect(clock.calls).toHaveLength(1);
    expect(events.map((e) => (e.type === "tool.result" ? e.outcome : e.type))).toEqual(["tool.call", "ok", "tool.unknown", "replayed"]);
    // A new non-idempotent call is recorded, started then done, with its tool, input and turn.
    expect(await tb.invoke("notes", { text: "x" })).toBe(1);
    expect(ledger.get(id({ text: "x" }))).toMatchObject({ state: "done", tool: "notes", input: inputDigest({ text: "x" }), turn: 7, ok: true, value: 1 });
  });
});

describe("a cancelled turn", () => {
  it("abandons a running tool call at once and aborts the tool's signal", async () => {
    const controller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const slow = defineTool({ name: "slow", description: "d", input: z.object({}), idempotent: true, timeoutMs: 10_000, run: (_i, ctx) => ((toolSignal = ctx.signal), new Promise<never>(() => {})) });
    const tb = box([slow as ReturnType<typeof counting>["tool"]], {}, [], { signal: controller.signal });
    const call = tb.invoke("slow", {});
    await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await expect(call).rejects.toThrow(/abandoned: the turn was cancelled/);
    expect(toolSignal?.aborted).toBe(true);
  });
});
