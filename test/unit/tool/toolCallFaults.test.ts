/**
 * Faults at every boundary of a tool call (docs/GUARANTEES.md), then the turn run again with
 * the calls in another order. A property draws the calls the model makes, the order it makes
 * them in on the re-run, fail/ackLost/delay faults at `tool.call` (the run) and `tool.record`
 * (each ledger put), and a crash at one of those points (the attempt is held there for ever and
 * abandoned, so nothing after the point runs, as when the process dies). Then:
 * - no non-idempotent call runs twice: each call id runs at most once, and no tool with an
 *   input runs more often than one attempt asked for it;
 * - whatever a call gets back is the outcome of that tool with that input, never another's;
 * - on the re-run, with the faults cleared, each non-idempotent call is answered by its own
 *   record: run now if it has none, replayed if it ended, unknown if it was under way.
 * The ledger is a real LMDB.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createToolRegistry, defineTool, inputDigest, ledgerOf, toolCallId, ToolOutcomeUnknownError, TurnToolBox, type ToolCallRecord, type ToolEvent } from "../../../actors/tool/index.ts";
import { FaultPlan, installFaults, type FaultPoint, type FaultRule } from "../../../runtime/faults/index.ts";
import type { LmdbActorStore } from "../../../runtime/store/index.ts";
import { faultSchedule, withFaults } from "../../support/faults/faultArbitraries.ts";
import { useTestEnv } from "../../support/soul/env.ts";

const env = useTestEnv();

interface Call {
  tool: "notes" | "pay" | "clock";
  input: Record<string, unknown>;
}

const call: fc.Arbitrary<Call> = fc.oneof(
  fc.constantFrom("a", "b").map((text): Call => ({ tool: "notes", input: { text } })),
  fc.constantFrom(1, 2).map((amount): Call => ({ tool: "pay", input: { amount } })),
  fc.constant<Call>({ tool: "clock", input: {} }),
);
const label = (c: Call) => `${c.tool} ${JSON.stringify(c.input)}`;

/**
 * A crashed attempt is held at its point for ever, like a dead process. A hold at `tool.call`
 * sits inside the tool's timeout, which would wake it (and it would go on, drawing faults from a
 * later run's plan): so the tools' timeout outlasts any test run.
 */
const NEVER_MS = 2_000_000_000;

/** The tools, whose every run is written down with its call id; a result names its tool, input and run. */
function tools() {
  const runs: { callId: string; label: string }[] = [];
  const make = (name: Call["tool"], input: z.ZodType, idempotent = false) =>
    defineTool({
      name,
      description: name,
      input,
      idempotent,
      timeoutMs: NEVER_MS,
      run: (value, ctx) => {
        runs.push({ callId: ctx.callId, label: `${name} ${JSON.stringify(value)}` });
        return `${name} ${JSON.stringify(value)} #${runs.length}`;
      },
    });
  const registry = createToolRegistry([make("notes", z.object({ text: z.string() })), make("pay", z.object({ amount: z.number() })), make("clock", z.object({}), true)]);
  return { registry, runs };
}

interface Outcome {
  call: Call;
  ok: boolean;
  value?: unknown;
  error?: unknown;
}

function box(registry: ReturnType<typeof tools>["registry"], store: object, events: ToolEvent[]) {
  return new TurnToolBox(registry, { soulId: "s1", turnId: "s1:4", turnKey: {}, causation: "p-1", now: () => 0, review: (p) => p, emit: (e) => events.push(e), ledger: ledgerOf(store) });
}

async function attempt(tb: TurnToolBox, calls: readonly Call[], outcomes: Outcome[]): Promise<"done"> {
  for (const c of calls) {
    try {
      outcomes.push({ call: c, ok: true, value: await tb.invoke(c.tool, c.input) });
    } catch (error) {
      outcomes.push({ call: c, ok: false, error });
    }
  }
  return "done";
}

/** The ids the re-run's calls get: a call's repeat counts the same tool with the same input before it. */
function idsOf(calls: readonly Call[]): string[] {
  const seen = new Map<string, number>();
  return calls.map((c) => {
    const input = inputDigest(c.input);
    const occurrence = seen.get(`${c.tool} ${input}`) ?? 0;
    seen.set(`${c.tool} ${input}`, occurrence + 1);
    return toolCallId({ soulId: "s1", perceptionId: "p-1", phase: "turn", tool: c.tool, input, occurrence });
  });
}

const crashAt = fc.option(fc.record({ point: fc.constantFrom<FaultPoint>("tool.call", "tool.record"), after: fc.boolean(), nth: fc.integer({ min: 1, max: 6 }) }), { nil: undefined });

const scenario = fc
  .array(call, { minLength: 1, maxLength: 5 })
  .chain((first) => fc.record({ first: fc.constant(first), reordered: fc.shuffledSubarray(first, { minLength: first.length, maxLength: first.length }), more: fc.array(call, { maxLength: 2 }) }))
  .chain((calls) => fc.record({ calls: fc.constant(calls), faults: faultSchedule({ points: ["tool.call", "tool.record"], maxNth: 6 }), crash: crashAt }));

describe("tool calls under faults, then the turn run again in another order", () => {
  it("never runs a non-idempotent call twice, never answers a call with another's outcome, and answers each by its own record once the faults clear", async () => {
    let run = 0;
    let crashes = 0;
    let injected = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ calls, faults, crash }) => {
        const store = env.actor(`soul-${++run}`);
        const { registry, runs } = tools();
        const outcomes: Outcome[] = [];

        // The first attempt, under the faults; a crash holds it at its point for ever.
        const rules: FaultRule[] = [...(crash ? [{ point: crash.point, nth: crash.nth, fault: { kind: "hold" as const, after: crash.after } }] : []), ...faults];
        const plan = new FaultPlan(rules);
        const uninstall = installFaults(plan);
        try {
          const crashed = crash ? plan.reached(crash.point).then(() => "crashed" as const) : new Promise<never>(() => {});
          if ((await Promise.race([attempt(box(registry, store, []), calls.first, outcomes), crashed])) === "crashed") {
            crashes++;
            // `reached` answers when the point is decided; an `after` crash is after the operation
            // landed. LMDB commits writes in order: once a later one is durable, the held one is.
            await (store as LmdbActorStore).kv("test").put(["landed"], run);
          }
          injected += plan.injected().length;
        } finally {
          uninstall();
        }

        // The re-run, in another order and perhaps with more calls, the faults cleared.
        const second = [...calls.reordered, ...calls.more];
        const ledger = ledgerOf(store);
        const before = idsOf(second).map((id) => ledger.get(id));
        const events: ToolEvent[] = [];
        const rerun: Outcome[] = [];
        await withFaults([], () => attempt(box(registry, store, events), second, rerun));

        // No non-idempotent call ran twice.
        const recorded = runs.filter((r) => !r.label.startsWith("clock"));
        expect(new Set(recorded.map((r) => r.callId)).size).toBe(recorded.length);
        for (const { label: l } of recorded) {
          const asked = Math.max(calls.first.filter((c) => label(c) === l).length, second.filter((c) => label(c) === l).length);
          expect(recorded.filter((r) => r.label === l).length).toBeLessThanOrEqual(asked);
        }
        // Whatever came back is that tool's with that input.
        for (const o of [...outcomes, ...rerun]) if (o.ok) expect(String(o.value)).toMatch(new RegExp(`^${escape(label(o.call))} #\\d+$`));
        // The re-run: each call answered by its own record.
        rerun.forEach((o, i) => expectAnswered(o, before[i]));
        expect(events.filter((e) => e.type === "tool.result" && e.outcome !== "ok" && e.outcome !== "replayed")).toEqual([]);
      }),
      { numRuns: 120 },
    );
    // The property saw what it is about: crashes at the points, and faults injected.
    expect(crashes).toBeGreaterThan(10);
    expect(injected).toBeGreaterThan(10);
  });
});

describe("a fault at one boundary of a non-idempotent call", () => {
  const pay: Call = { tool: "pay", input: { amount: 1 } };
  const payId = idsOf([pay])[0]!;

  async function twice(rules: FaultRule[]) {
    const store = env.actor("s1");
    const { registry, runs } = tools();
    const first: Outcome[] = [];
    const events: ToolEvent[] = [];
    await withFaults(rules, async (plan) => {
      await attempt(box(registry, store, events), [pay], first);
      expect(plan.injected()).toHaveLength(1);
    });
    const again: Outcome[] = [];
    await attempt(box(registry, store, []), [pay], again);
    return { first: first[0]!, again: again[0]!, runs, events, record: ledgerOf(store).get(payId) };
  }

  it("the started record not written: the call is refused and not run; the re-run runs it once", async () => {
    const { first, again, runs, events } = await twice([{ point: "tool.record", match: { state: "started" }, fault: { kind: "fail" } }]);
    expect((first.error as Error).message).toBe("tool pay not called: its call could not be recorded first (injected fault at tool.record: failed before it landed)");
    expect(events.map((e) => e.type === "tool.result" && e.outcome)).toEqual(["error"]);
    expect(again).toMatchObject({ ok: true, value: 'pay {"amount":1} #1' });
    expect(runs).toHaveLength(1);
  });

  it("the started record written, its acknowledgement lost: not run, and the re-run reports it unknown rather than run it", async () => {
    const { first, again, runs } = await twice([{ point: "tool.record", match: { state: "started" }, fault: { kind: "ackLost" } }]);
    expect(first.ok).toBe(false);
    expect(again.error).toBeInstanceOf(ToolOutcomeUnknownError);
    expect(runs).toHaveLength(0);
  });

  it("the run's answer lost (it ran): the failure is recorded and replayed, never run again", async () => {
    const { first, again, runs } = await twice([{ point: "tool.call", fault: { kind: "ackLost" } }]);
    expect((first.error as Error).message).toBe("injected fault at tool.call: landed, acknowledgement lost");
    expect((again.error as Error).message).toBe("injected fault at tool.call: landed, acknowledgement lost");
    expect(runs).toHaveLength(1);
  });

  it("the done record not written: the call still gets what the tool returned, and the re-run reports it unknown", async () => {
    const { first, again, runs, events, record } = await twice([{ point: "tool.record", match: { state: "done" }, fault: { kind: "fail" } }]);
    expect(first).toMatchObject({ ok: true, value: 'pay {"amount":1} #1' });
    expect(events.at(-1)).toMatchObject({ type: "tool.result", outcome: "ok", reason: expect.stringContaining("its outcome could not be recorded") });
    expect(record).toMatchObject({ state: "started", tool: "pay", input: inputDigest({ amount: 1 }), turn: 4 });
    expect(again.error).toBeInstanceOf(ToolOutcomeUnknownError);
    expect(runs).toHaveLength(1);
  });
});

function expectAnswered(o: Outcome, record: ToolCallRecord | undefined): void {
  if (o.call.tool === "clock" || record === undefined) {
    expect(o).toMatchObject({ ok: true });
    return;
  }
  if (record.state === "started") {
    expect(o.error).toBeInstanceOf(ToolOutcomeUnknownError);
    return;
  }
  expect(o.ok).toBe(record.ok);
  if (record.ok) expect(o.value).toBe(record.value);
  else expect((o.error as Error).message).toBe(String(record.value));
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
