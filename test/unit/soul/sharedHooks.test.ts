/**
 * useSharedContext() and emitEphemeral() in a soul run by createSoul with its services given
 * directly (as a test host does): shared writes land at once and are not undone by a turn that
 * fails, ephemeral events go to the service at the call (both hook shapes), and a missing
 * service or a bad type is a clear error.
 */
import { describe, expect, it } from "vitest";
import { createMemoryActorStore, createSoul, defineSoul, emitEphemeral, useActions, usePerceptions, useSharedContext, type MentalProcess, type SoulServices } from "../../../actors/soul/index.ts";
import { createMemorySharedKv } from "../../../runtime/bus/index.ts";
import { record, said } from "../../support/soul/helpers.ts";

const process: MentalProcess = async ({ workingMemory }) => {
  const { content } = usePerceptions().invokingPerception;
  if (content === "emit") {
    emitEphemeral("typing", { on: true });
    useActions().emitEphemeral({ type: "done" });
    useActions().speak("emitted");
  } else if (content === "bad type") {
    emitEphemeral("no spaces allowed", 1);
  } else {
    const ctx = useSharedContext(content === "own" ? undefined : "room");
    await ctx.ready;
    const n = await ctx.update<number>("n", (v) => (v ?? 0) + 1);
    if (content === "fail") throw new Error("failed after the write");
    useActions().speak(`${ctx.name} n=${n} data=${JSON.stringify(ctx.data)}`);
  }
  return workingMemory;
};
const blueprint = defineSoul({ name: "Sharer", persona: "shares", initialProcess: process, processes: { process } });

function soulWith(services: SoulServices) {
  const soul = createSoul({ blueprint, id: "s1", store: createMemoryActorStore("s1"), services });
  return { soul, log: record(soul) };
}

async function turn(soul: ReturnType<typeof soulWith>["soul"], content: string): Promise<void> {
  await soul.perceive(said(content));
  await soul.idle();
}

describe("useSharedContext and emitEphemeral in a soul", () => {
  it("writes to the shared context at once: a turn that fails after its write has still made it", async () => {
    const kv = createMemorySharedKv("t");
    const { soul, log } = soulWith({ sharedContext: kv });
    await turn(soul, "room");
    await turn(soul, "fail");
    await turn(soul, "room");
    await turn(soul, "own");
    expect(log.said()).toEqual(['room n=1 data={"n":1}', 'room n=3 data={"n":3}', 's1 n=1 data={"n":1}']);
    expect(log.errors().join("\n")).toContain("failed after the write");
    expect((await kv.get("room", "n"))?.value).toBe(3);
    await soul.stop();
  });

  it("sends ephemeral events to the service at the call, in both hook shapes", async () => {
    const sent: unknown[] = [];
    const { soul, log } = soulWith({ ephemeral: (soulId, type, data) => sent.push({ soulId, type, data }) });
    await turn(soul, "emit");
    expect(sent).toEqual([
      { soulId: "s1", type: "typing", data: { on: true } },
      { soulId: "s1", type: "done", data: undefined },
    ]);
    expect(log.said()).toEqual(["emitted"]);
    await turn(soul, "bad type");
    expect(log.errors().join("\n")).toMatch(/emitEphemeral\(\): the type "no spaces allowed" must be 1-64 characters/);
    await soul.stop();
  });

  it("says which service is missing", async () => {
    const { soul, log } = soulWith({});
    await turn(soul, "room");
    await turn(soul, "emit");
    expect(log.errors().join("\n")).toMatch(/useSharedContext\(\) needs the sharedContext service/);
    expect(log.errors().join("\n")).toMatch(/emitEphemeral\(\) needs the ephemeral service/);
    await soul.stop();
  });
});
