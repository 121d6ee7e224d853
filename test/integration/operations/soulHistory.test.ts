/**
 * A soul's history through node control (`soul`, `turns`, `revert`: docs/PROTOCOL.md §12,
 * docs/DEBUGGER.md): committed turns with their steps, a revert in the running node that
 * restores the chosen turn's state and keeps turn numbers going up, and a revert made while
 * perceptions keep arriving, with every one answered exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineSoul, useActions, useSoulMemory, type MentalProcess } from "../../../actors/soul/index.ts";
import { externalDialog } from "../../../runtime/cognition/index.ts";
import { decodeControl, encodeControl, parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import type { ControlError, RevertReply, SoulDetailReply, TurnsReply } from "../../../runtime/node/controlProtocol.ts";
import { ModelRegistry } from "../../../runtime/providers/index.ts";
import { until, watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { countingModel } from "../../support/operations/countingModel.ts";
import { tempDirs } from "../../support/tempDirs.ts";

/** Remembers how many messages it heard and the last one, answers through a model step. */
const talk: MentalProcess = async ({ workingMemory }) => {
  const heard = useSoulMemory<number>("heard", 0);
  const last = useSoulMemory<string>("last", "");
  heard.current += 1;
  last.current = String(workingMemory.memories.at(-1)?.content ?? "");
  const [memory, reply] = await externalDialog(workingMemory, "Answer briefly.", { model: "fake:talk" });
  if (!last.current.includes("quiet")) useActions().speak(reply);
  return memory;
};
const talker = defineSoul({ name: "Talker", persona: "Talks.", initialProcess: talk, processes: { talk } });

describe("a soul's history through node control", () => {
  const dirs = tempDirs();
  const cluster = "history";
  let node: EnsoulNode;
  const control = async <T extends object>(verb: string, body: object): Promise<T | ControlError> =>
    decodeControl<T>(await node.bus.request(node.subjects.node(node.id, verb), encodeControl(body), { timeoutMs: 10_000 }));
  const turnsOf = async (soulId: string, extra: object = {}) => (await control<TurnsReply>("turns", { soulId, ...extra })) as TurnsReply;

  beforeAll(async () => {
    const config = parseClusterConfig({ cluster, providers: { default: "fake:talk" }, souls: [{ id: "talker", blueprint: talker }, { id: "busy", blueprint: talker }] });
    node = await startNode({ config, data: dirs.make(), store: { noSync: true }, registry: new ModelRegistry().register("fake", countingModel()) });
  });
  afterAll(async () => {
    await node?.stop();
    dirs.cleanup();
  });

  it("lists committed turns newest first with the perception, memory, steps and why a turn was silent", async () => {
    const soul = await node.soul("talker");
    const texts = ["hello", "how are you?", "be quiet now"];
    for (const [i, text] of texts.entries()) {
      await perceive(node.bus, "talker", text);
      await until(() => soul.state().turn >= i + 1, 10_000, `turn ${i + 1}`);
    }
    const reply = await turnsOf("talker");
    expect(reply.turns.map((t) => t.turn)).toEqual([3, 2, 1]);
    const [quiet, second] = reply.turns;
    expect(second?.perception).toMatchObject({ content: "how are you?", name: "ada" });
    expect(second?.answered).toBe(true);
    expect(second?.proposals).toEqual([expect.objectContaining({ kind: "speak", content: "Fine, thank you.", verdict: "passed" })]);
    const step = second?.steps[0];
    expect(step).toMatchObject({ step: "externalDialog", model: "fake:talk", raw: "Fine, thank you.", tokens: { input: 10, output: 5 } });
    expect(step?.latencyMs).toBeGreaterThanOrEqual(0);
    // The prompt: the conversation so far (fenced as the model saw it), then the command.
    expect(step?.prompt.map((m) => m.content).join("\n")).toContain("hello");
    expect(step?.prompt.at(-1)?.content).toContain("Answer briefly.");
    expect(second?.memory.after.length).toBeGreaterThan((second?.memory.before ?? []).length);
    expect(second?.state.soulMemory).toMatchObject({ heard: 2 });
    expect(quiet?.answered).toBe(false);
    expect(quiet?.silence).toEqual({ reason: "no-speech", detail: expect.any(String) });

    const older = await turnsOf("talker", { before: 3, limit: 1 });
    expect(older.turns.map((t) => t.turn)).toEqual([2]);
    expect(older.next).toBe(2);
    const detail = (await control<SoulDetailReply>("soul", { soulId: "talker" })) as SoulDetailReply;
    expect(detail.turnLog).toMatchObject({ oldest: 1, newest: 3 });
    expect(detail.soul).toMatchObject({ id: "talker", turns: 3, tokens: { input: 30, output: 15 } });
    expect(detail.soul.turnsPerMinute).toBeGreaterThanOrEqual(3);
  });

  it("reverts the running soul to an earlier turn, and the next turn number still goes up", async () => {
    const reverted = (await control<RevertReply>("revert", { soulId: "talker", turn: 1, by: "ada" })) as RevertReply;
    expect(reverted.revert).toMatchObject({ turn: 3, toTurn: 1, by: "ada" });
    const soul = await node.soul("talker");
    expect(soul.memory().soulMemory).toMatchObject({ heard: 1, last: expect.stringContaining("hello") });
    expect(soul.state().turn).toBe(3);

    await perceive(node.bus, "talker", "and now?");
    const again = await node.soul("talker");
    await until(() => again.state().turn === 4, 10_000, "turn 4");
    const reply = await turnsOf("talker");
    expect(reply.turns[0]?.turn).toBe(4);
    expect(reply.turns[0]?.state.soulMemory).toMatchObject({ heard: 2 });
    expect(reply.reverts).toEqual([expect.objectContaining({ turn: 3, toTurn: 1, by: "ada" })]);
  });

  it("answers 404-style errors for an unknown soul and a turn not kept", async () => {
    expect(await control("turns", { soulId: "nobody" })).toMatchObject({ code: "not-found" });
    expect(await control("revert", { soulId: "talker", turn: 99 })).toMatchObject({ code: "not-found" });
    expect(await control("revert", { soulId: "talker" })).toMatchObject({ code: "bad-request" });
  });

  it("a revert during traffic loses no perception and answers none twice", async () => {
    const says = watchEnvelopes(node.bus, `ensoul.${cluster}.soul.busy.says`, "speech");
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push((await perceive(node.bus, "busy", `first ${i}`)).id);
    const busy = await node.soul("busy");
    await until(() => busy.state().turn >= 2, 10_000, "two turns");
    const reverting = control<RevertReply>("revert", { soulId: "busy", turn: 1, by: "ada" });
    for (let i = 0; i < 5; i++) sent.push((await perceive(node.bus, "busy", `second ${i}`)).id);
    expect(await reverting).toMatchObject({ revert: { toTurn: 1 } });
    await until(() => new Set(says.seen.filter((e) => e.body.final).map((e) => e.causation)).size === sent.length, 15_000, "every answer");
    const answered = says.seen.filter((e) => e.body.final).map((e) => e.causation);
    expect(answered.sort()).toEqual([...sent].sort());
    expect(new Set(answered).size).toBe(answered.length);
    says.stop();
    expect((await node.soul("busy")).state().turn).toBe(10);
  });
});
