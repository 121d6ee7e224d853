/**
 * Per-soul budgets (`souls[].budget` in the cluster config): a soul's model calls are counted
 * per hour and per day, and once a budget is spent its autonomous work stops: a scheduled turn,
 * a subprocess, an ISM choosing its next action, a daimon's divination. The refused call fails
 * at once with a clear error (the turn reports it), the node raises one `node.budget` event
 * and logs one line for the period, and nothing more is spent. A person's own message is
 * still answered, unless `stops: all`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineSoul, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { externalDialog } from "../../../runtime/cognition/index.ts";
import { createLogger } from "../../../runtime/log/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { ModelRegistry } from "../../../runtime/providers/index.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { ismSoul } from "../../support/soul/ismSoul.ts";
import { pause, until, watchEnvelopes, type Watch } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { countingModel } from "../../support/operations/countingModel.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import type { Envelope } from "../../../runtime/bus/index.ts";

/**
 * `start` schedules a tick; each tick thinks (a model call, `fake:tick`) and schedules the
 * next, forever: without a budget it would spend without limit. Anything else someone says is
 * answered (`fake:talk`).
 */
const tick: MentalProcess = async ({ workingMemory }) => {
  const { invokingPerception } = usePerceptions();
  const { scheduleEvent, speak } = useActions();
  const next = () => scheduleEvent({ process: tick, in: 0.01, perception: { action: "tick", content: "tick" } });
  if (invokingPerception.internal) {
    const [memory] = await externalDialog(workingMemory, "Think about the hour.", { model: "fake:tick" });
    next();
    return memory;
  }
  if (invokingPerception.content === "start") {
    next();
    return workingMemory;
  }
  const [memory, reply] = await externalDialog(workingMemory, "Answer briefly.", { model: "fake:talk" });
  speak(reply);
  return memory;
};
const ticker = defineSoul({ name: "Ticker", persona: "Keeps time.", initialProcess: tick, processes: { tick } });

/** Answers (`fake:talk`), then reflects in a subprocess after the turn (`fake:reflect`). */
const answer: MentalProcess = async ({ workingMemory }) => {
  const [memory, reply] = await externalDialog(workingMemory, "Answer briefly.", { model: "fake:talk" });
  useActions().speak(reply);
  return memory;
};
const reflect: MentalProcess = async ({ workingMemory }) => (await externalDialog(workingMemory, "Reflect on the exchange.", { model: "fake:reflect" }))[0];
const reflective = defineSoul({ name: "Reflective", persona: "Thinks afterwards.", initialProcess: answer, processes: { answer }, subprocesses: { reflect } });

type EventEnvelope = Envelope<"event"> & { subject: string };
const data = (e: EventEnvelope) => e.body.data as Record<string, unknown>;

describe("per-soul budgets", () => {
  const dirs = tempDirs();
  const fake = countingModel();
  const logged: Record<string, unknown>[] = [];
  const cluster = "thrifty";
  let node: EnsoulNode;
  let events: Watch<EventEnvelope>;
  const calls = (model: string) => fake.models().filter((m) => m === model).length;
  const budgetEvents = (soul: string) => events.seen.filter((e) => e.body.type === "node.budget" && e.to === soul);

  beforeAll(async () => {
    const config = parseClusterConfig({
      cluster,
      providers: { default: "fake:talk" },
      souls: [
        { id: "ticker", blueprint: ticker, budget: { hour: { calls: 3 }, day: { calls: 100 } } },
        { id: "strict", blueprint: ticker, budget: { day: { calls: 1 }, stops: "all" } },
        { id: "watched", blueprint: echoSoul, budget: { hour: { tokens: 30 } } },
        { id: "solver", blueprint: ismSoul(), budget: { hour: { calls: 1 } } },
        { id: "reflective", blueprint: reflective, budget: { hour: { calls: 1 } } },
      ],
      daimons: [{ soul: "watched", name: "Nyx", persona: "You are Nyx. You notice what is left unsaid.", model: "fake:nyx", mode: "whisper", everyN: 1 }],
    });
    const logger = createLogger({ level: "info", format: "json", target: { write: (line) => void logged.push(JSON.parse(line) as Record<string, unknown>) } });
    node = await startNode({ config, data: dirs.make(), store: { noSync: true }, registry: new ModelRegistry().register("fake", fake), logger });
    events = watchEnvelopes(node.bus, `ensoul.${cluster}.soul.*.events`, "event");
  });
  afterAll(async () => {
    events?.stop();
    await node?.stop();
    dirs.cleanup();
  });

  it("stops a soul's scheduled work after its call budget, with one event and one log line, and still answers a person", async () => {
    await perceive(node.bus, "ticker", "start");
    const refused = await events.next((e) => e.to === "ticker" && e.body.type === "soul.error", 10_000, "the refused tick");
    expect(data(refused).message).toMatch(/^soul 'ticker': call budget spent: 3 of 3 calls this hour; its autonomous work \(schedule\) stops until \d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/);
    expect(refused.trace).toMatch(/^ticker:\d+$/);
    await pause(300); // ticks would come every 10 ms
    expect(calls("tick")).toBe(3);

    const [spent] = budgetEvents("ticker");
    expect(data(spent)).toMatchObject({ period: "hour", work: "schedule", reason: data(refused).message });
    expect(data(spent).resumesAt).toBeGreaterThan(Date.now());
    const lines = logged.filter((l) => l.soul === "ticker" && /budget spent/.test(String(l.msg)));
    // The budget's own line, then the refused turn's (with its trace).
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ["warn", data(refused).message],
      ["warn", `soul ticker: process failed in tick: ${String(data(refused).message)}`],
    ]);
    expect(lines[0]).toMatchObject({ node: "local", period: "hour", work: "schedule" });
    expect(lines[1]).toMatchObject({ node: "local", trace: refused.trace });

    // A person's message is a conversation turn: counted, and answered all the same.
    const says = watchEnvelopes(node.bus, `ensoul.${cluster}.soul.ticker.says`, "speech");
    await perceive(node.bus, "ticker", "are you there?");
    await says.next((e) => e.body.final, 10_000, "the answer past the budget");
    says.stop();
    expect(calls("talk")).toBe(1);
    expect(budgetEvents("ticker")).toHaveLength(1);
  });

  it("with stops: all, refuses a person's turn too, at once and clearly", async () => {
    await perceive(node.bus, "strict", "hello");
    await events.next((e) => e.to === "strict" && e.body.type === "soul.turn", 10_000, "the first answer");
    const p = await perceive(node.bus, "strict", "hello again");
    const refused = await events.next((e) => e.to === "strict" && e.body.type === "soul.error" && e.causation === p.id, 10_000, "the refused turn");
    expect(data(refused).message).toMatch(/^soul 'strict': call budget spent: 1 of 1 calls this day; its turns stop until \d{4}-\d\d-\d\dT00:00:00\.000Z$/);
    expect(budgetEvents("strict").map((e) => data(e).work)).toEqual(["turn"]);
  });

  it("stops a daimon divining once its soul's token budget is spent", async () => {
    const whispers = watchEnvelopes(node.bus, `ensoul.${cluster}.soul.watched.whisper`, "whisper");
    for (let i = 1; i <= 4; i++) {
      await perceive(node.bus, "watched", `line ${i}`);
      await events.next((e) => e.to === "watched" && e.body.type === "soul.turn" && data(e).turn === i, 10_000, `turn ${i}`);
      if (i <= 2) await whispers.next(() => whispers.seen.length >= i, 10_000, `whisper ${i}`);
      if (i === 3) await until(() => budgetEvents("watched").length === 1, 10_000, "the daimon's budget event");
    }
    await pause(300);
    whispers.stop();
    // Two divinations of 15 tokens each spend the 30; the third and fourth never call the model.
    expect(calls("nyx")).toBe(2);
    expect(whispers.seen).toHaveLength(2);
    expect(budgetEvents("watched").map((e) => [data(e).period, data(e).work])).toEqual([["hour", "daimon"]]);
    expect(String(data(budgetEvents("watched")[0]).reason)).toMatch(/^soul 'watched': token budget spent: 30 of 30 tokens this hour; its autonomous work \(daimon\) stops until /);
    const lines = logged.filter((l) => l.soul === "watched");
    expect(lines.map((l) => l.msg)).toEqual([data(budgetEvents("watched")[0]).reason]);
  });

  it("stops an ISM choosing its next action once the budget is spent", async () => {
    const before = fake.requests.length;
    await perceive(node.bus, "solver", "my build is broken");
    await events.next((e) => e.to === "solver" && e.body.type === "soul.turn", 10_000, "the greeting");
    expect(fake.requests.length).toBe(before + 1); // the greeting, a conversation turn, spent the one call
    await perceive(node.bus, "solver", "it fails at link time");
    await until(() => budgetEvents("solver").length === 1, 10_000, "the ISM's budget event");
    expect(data(budgetEvents("solver")[0])).toMatchObject({ period: "hour", work: "ism" });
    await node.idle();
    expect(fake.requests.length).toBe(before + 1);
  });

  it("stops a subprocess once the budget is spent, after the person was answered", async () => {
    const says = watchEnvelopes(node.bus, `ensoul.${cluster}.soul.reflective.says`, "speech");
    await perceive(node.bus, "reflective", "what do you think?");
    await says.next((e) => e.body.final, 10_000, "the answer");
    says.stop();
    const refused = await events.next((e) => e.to === "reflective" && e.body.type === "soul.error", 10_000, "the refused subprocess");
    expect(data(refused)).toMatchObject({ phase: "subprocess", process: "reflect" });
    expect(data(budgetEvents("reflective")[0])).toMatchObject({ period: "hour", work: "subprocess" });
    expect(calls("reflect")).toBe(0);
  });
});
