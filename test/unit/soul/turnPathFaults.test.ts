/**
 * One soul on a real LMDB store with a fault injected at one point of its turn path
 * (runtime/faults): the cases the property test over a node (test/integration/soul/
 * turnPathFaults.test.ts) found, each pinned down on its own.
 */
import { describe, expect, it } from "vitest";
import { createSoul, defineSoul, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { InjectedFault } from "../../../runtime/faults/index.ts";
import { withFaults } from "../../support/faults/faultArbitraries.ts";
import { deferred, record, said } from "../../support/soul/helpers.ts";
import { useTestEnv } from "../../support/soul/env.ts";

const env = useTestEnv();

/** Says back what it heard; waits for `gate` first when one is set. */
function echoing(gate?: { promise: Promise<void> }) {
  const echo: MentalProcess = async ({ workingMemory }) => {
    const { content } = usePerceptions().invokingPerception;
    if (gate) await gate.promise;
    useActions().speak(`echo: ${content}`);
    return workingMemory.withMonologue(`heard ${content}`);
  };
  return defineSoul({ name: "Echo", persona: "Says back what it hears.", initialProcess: echo, processes: { echo } });
}

describe("perception.intake: the inbox write fails, or lands late, after the soul started the turn", () => {
  it("the caller is told it was not taken, the turn under way answers it, no failure is reported, and the redelivery is a duplicate", async () => {
    const soul = createSoul({ blueprint: echoing(), id: "e", store: env.actor("e") });
    const log = record(soul);
    const input = { ...said("hi"), id: "p-1" };
    await withFaults([{ point: "perception.intake", fault: { kind: "fail" } }], async (plan) => {
      await expect(soul.perceive(input)).rejects.toBeInstanceOf(InjectedFault);
      await soul.idle();
      // The source delivers it again, as it does for any perception it was not told was taken.
      expect(await soul.perceive(input)).toMatchObject({ accepted: false, reason: "duplicate" });
      await soul.idle();
      expect(plan.injected("perception.intake")).toHaveLength(1);
    });
    expect(log.errors()).toEqual([]);
    expect(log.said()).toEqual(["echo: hi"]);
    expect(env.actor("e").inboxEntry("p-1")).toMatchObject({ status: "done" });
    await soul.stop();
  });

  it("a redelivery that arrives while the first turn still runs waits for it: answered once, not twice", async () => {
    const gate = deferred();
    const soul = createSoul({ blueprint: echoing(gate), id: "e", store: env.actor("e") });
    const log = record(soul);
    const input = { ...said("hi"), id: "p-1" };
    await withFaults([{ point: "perception.intake", fault: { kind: "fail" } }], async () => {
      await expect(soul.perceive(input)).rejects.toBeInstanceOf(InjectedFault);
      // Delivered again before the turn the first delivery started has finished.
      const again = soul.perceive(input);
      gate.resolve();
      expect(await again).toMatchObject({ accepted: false, reason: "duplicate" });
      await soul.idle();
    });
    expect(log.said()).toEqual(["echo: hi"]);
    expect(log.errors()).toEqual([]);
    expect(env.actor("e").loadState()?.turn).toBe(1);
    await soul.stop();
  });

  it("a write that lands after the turn's commit (slow to start) neither fails the turn nor leaves the entry pending", async () => {
    const soul = createSoul({ blueprint: echoing(), id: "e", store: env.actor("e") });
    const log = record(soul);
    await withFaults([{ point: "perception.intake", fault: { kind: "delay", ms: 30 } }], async () => {
      expect(await soul.perceive({ ...said("hi"), id: "p-1" })).toMatchObject({ id: "p-1" });
      await soul.idle();
    });
    expect(log.said()).toEqual(["echo: hi"]);
    expect(log.errors()).toEqual([]);
    expect(env.actor("e").inboxEntry("p-1")).toMatchObject({ status: "done" });
    expect(env.actor("e").pendingInbox()).toEqual([]);
    await soul.stop();
  });
});

describe("perception.intake and turn.commit together", () => {
  it("the inbox write lands but its caller hears an error, and the turn fails first: set aside, told once, and the redelivery is a duplicate (it does not wait for ever)", async () => {
    const soul = createSoul({ blueprint: echoing(), id: "e", store: env.actor("e") });
    const log = record(soul);
    const input = { ...said("hi"), id: "p-1" };
    await withFaults(
      [
        { point: "perception.intake", fault: { kind: "ackLost" } },
        { point: "turn.commit", fault: { kind: "fail" } },
      ],
      async () => {
        await expect(soul.perceive(input)).rejects.toBeInstanceOf(InjectedFault);
        await soul.idle();
      },
    );
    // Its source delivers it again; a wait for a turn that already ended would never end.
    const redelivered = await Promise.race([soul.perceive(input), new Promise((resolve) => setTimeout(() => resolve("still waiting after 3 s"), 3_000))]);
    expect(redelivered).toMatchObject({ accepted: false, reason: "duplicate" });
    expect(env.actor("e").inboxEntry("p-1")).toMatchObject({ status: "error" });
    expect(log.events.filter((e) => e.type === "error" && e.phase === "process")).toEqual([expect.objectContaining({ perceptionId: "p-1" })]);
    expect(log.said()).toEqual([]);
    await soul.stop();
  });
});

describe("turn.commit: the commit fails before it lands", () => {
  it("a turn that fails before its perception's own inbox write landed still sets it aside, told, not left pending", async () => {
    const soul = createSoul({ blueprint: echoing(), id: "e", store: env.actor("e") });
    const log = record(soul);
    await withFaults(
      [
        { point: "perception.intake", fault: { kind: "delay", ms: 30 } },
        { point: "turn.commit", fault: { kind: "fail" } },
      ],
      async () => {
        await soul.perceive({ ...said("hi"), id: "p-1" });
        await soul.idle();
      },
    );
    expect(env.actor("e").inboxEntry("p-1")).toMatchObject({ status: "error" });
    expect(env.actor("e").pendingInbox()).toEqual([]);
    expect(log.events.filter((e) => e.type === "error" && e.phase === "process")).toEqual([expect.objectContaining({ perceptionId: "p-1" })]);
    await soul.stop();
  });

  it.each(["fail", "ackLost"] as const)("recording a held perception's failure goes wrong (%s): tried again until it is recorded, then told once; nothing left pending or delivered again", async (kind) => {
    const soul = createSoul({ blueprint: echoing(), id: "e", store: env.actor("e") });
    const log = record(soul);
    await withFaults(
      [
        { point: "turn.commit", fault: { kind: "fail" } },
        // Recording the failure writes the held perception to the inbox first: that goes wrong once.
        { point: "perception.intake", fault: { kind } },
      ],
      async (plan) => {
        const held = await soul.perceiveHeld({ ...said("hi"), id: "p-1" });
        // The source acknowledges it once its failure is recorded: it is set aside, not delivered again.
        await held.settled;
        await soul.idle();
        expect(plan.injected()).toHaveLength(2);
        expect(plan.count("perception.intake")).toBe(2);
      },
    );
    expect(env.actor("e").inboxEntry("p-1")).toMatchObject({ status: "error" });
    expect(env.actor("e").pendingInbox()).toEqual([]);
    // Told only once its fate was written, and once.
    expect(log.events.filter((e) => e.type === "error" && e.phase === "process")).toEqual([expect.objectContaining({ perceptionId: "p-1" })]);
    expect(log.said()).toEqual([]);
    await soul.stop();
  });

  it("a perception whose failure is recorded is set aside with its error, and the person is told once", async () => {
    const soul = createSoul({ blueprint: echoing(), id: "e", store: env.actor("e") });
    const log = record(soul);
    await withFaults([{ point: "turn.commit", fault: { kind: "fail" } }], async () => {
      await soul.perceive({ ...said("hi"), id: "p-1" });
      await soul.idle();
    });
    expect(log.events.filter((e) => e.type === "error" && e.phase === "process")).toEqual([expect.objectContaining({ perceptionId: "p-1", message: expect.stringMatching(/turn\.commit/) })]);
    expect(env.actor("e").inboxEntry("p-1")).toMatchObject({ status: "error" });
    expect(log.said()).toEqual([]);
    await soul.stop();
  });
});
