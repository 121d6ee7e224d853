import { afterEach, describe, expect, it } from "vitest";
import { startDaimon, type DaimonHandle, type DaimonMode } from "../../../actors/daimon/index.ts";
import { createInProcessBus, type Bus, type Envelope } from "../../../runtime/bus/index.ts";
import { createDefaultRegistry, GROQ_DEFAULT_MODEL, ModelRegistry } from "../../../runtime/providers/index.ts";
import { clusterSubjects, cognitionWith, collect, countingModel, pause, sayToSoul, soulSays, spyBus, until } from "./daimonTestKit.ts";

const SOUL = "ann";
const subjects = clusterSubjects("daimon_unit");
const persona = "You are Kothar wa Khasis, craftsman of the gods: sardonic, perceptive, brief.";

let bus: Bus;
let daimon: DaimonHandle | undefined;
afterEach(async () => {
  await daimon?.stop();
  daimon = undefined;
  await bus?.close();
});

function setup(mode: DaimonMode, answer = 'Kothar whispers: "They want <b>assurance</b>, not answers."') {
  bus = createInProcessBus({ cluster: "daimon_unit" });
  const spy = spyBus(bus);
  const counting = countingModel(answer);
  const whispers = collect(bus, subjects.whisper(SOUL)).envelopes;
  const says = collect(bus, subjects.says(SOUL)).envelopes;
  const perceived = collect(bus, subjects.perceive(SOUL)).envelopes;
  const errors: string[] = [];
  daimon = startDaimon({
    bus: spy.bus,
    soulId: SOUL,
    soulName: "Ann",
    daimon: { name: "Kothar", persona, mode, everyN: 1 },
    cognition: cognitionWith(counting.model),
    onError: (e, phase) => errors.push(`${phase}: ${(e as Error).message}`),
  });
  const handle = daimon;
  const fromDaimon = (list: Envelope[]) => list.filter((e) => e.from === "Kothar");
  /** One exchange, then wait until the daimon is back to watching (or has nothing to do). */
  const exchange = async (said: string, answer: string, meta?: Record<string, unknown>) => {
    const perception = await sayToSoul(bus, subjects, SOUL, "Bob", said, meta);
    await soulSays(bus, subjects, SOUL, answer);
    await pause(20);
    await until(() => handle.phase() === "watching" || handle.phase() === "off", 2000, "daimon idle");
    return perception;
  };
  return { spy, counting, whispers, says, perceived, errors, exchange, fromDaimon, handle };
}

describe("startDaimon on a bus", () => {
  it("observes an exchange, divines with its persona and model, and whispers on soul.<id>.whisper", async () => {
    const t = setup("whisper");
    const perception = await t.exchange("Will it really be fine?", "Yes, it will.");
    await until(() => t.whispers.length === 1, 2000, "a whisper");
    const whisper = t.whispers[0];
    expect(whisper.kind).toBe("whisper");
    expect(whisper.from).toBe("Kothar");
    expect(whisper.to).toBe(SOUL);
    expect(whisper.causation).toBe(perception.id);
    expect(whisper.body).toEqual({ content: "They want assurance, not answers.", source: "Kothar" });
    // Its own model, its own persona, the conversation fenced as untrusted text.
    expect(t.counting.calls).toHaveLength(1);
    const messages = t.counting.calls[0].messages;
    expect(messages[0]).toMatchObject({ role: "system", content: persona });
    expect(messages[1].role).toBe("user");
    expect(messages[1].content).toContain("UNTRUSTED INPUT");
    expect(messages[1].content).toContain("Bob: Will it really be fine?\nAnn: Yes, it will.");
    expect(messages.at(-1)?.content).toContain('Use the format: Kothar whispers: "..."');
    expect(t.fromDaimon(t.says)).toEqual([]);
    expect(t.errors).toEqual([]);
  });

  it("mode switches at run time change what is published: whisper -> speak -> both -> off -> whisper", async () => {
    const t = setup("whisper", 'Kothar whispers: "Ask what they fear."');
    const counts = () => ({ whispers: t.whispers.length, speech: t.fromDaimon(t.says).length, perceptions: t.fromDaimon(t.perceived).length });

    await t.exchange("one", "a");
    await until(() => counts().whispers === 1);
    expect(counts()).toEqual({ whispers: 1, speech: 0, perceptions: 0 });

    t.handle.setMode("speak");
    await t.exchange("two", "b", { channel: "C42", thread: "t1" });
    await until(() => counts().speech === 1 && counts().perceptions === 1);
    expect(counts()).toEqual({ whispers: 1, speech: 1, perceptions: 1 });
    const speech = t.fromDaimon(t.says)[0];
    expect(speech.kind === "speech" && speech.body).toMatchObject({ text: "Ask what they fear.", final: true });
    const heard = t.fromDaimon(t.perceived)[0];
    // The soul hears the daimon speak, in the same channel the conversation is in.
    expect(heard.kind === "perception" && heard.body).toEqual({ action: "said", content: "Ask what they fear.", name: "Kothar", meta: { channel: "C42", thread: "t1" } });

    t.handle.setMode("both");
    await t.exchange("three", "c");
    await until(() => counts().whispers === 2 && counts().speech === 2 && counts().perceptions === 2);

    t.handle.setMode("off");
    const callsBefore = t.counting.calls.length;
    await t.exchange("four", "d");
    await pause(30);
    expect(counts()).toEqual({ whispers: 2, speech: 2, perceptions: 2 });
    expect(t.counting.calls).toHaveLength(callsBefore);

    t.handle.setMode("whisper");
    expect(t.handle.mode).toBe("whisper");
    await t.exchange("five", "e");
    await until(() => counts().whispers === 3);
    expect(counts()).toEqual({ whispers: 3, speech: 2, perceptions: 2 });
    expect(t.errors).toEqual([]);
  });

  it("costs nothing when off: no subscription on the bus, no model call", async () => {
    const t = setup("off");
    expect(t.spy.stats).toEqual({ subscribeCalls: 0, active: 0 });
    for (let i = 0; i < 5; i++) await t.exchange(`q${i}`, `a${i}`);
    await pause(30);
    expect(t.counting.calls).toHaveLength(0);
    expect(t.whispers).toHaveLength(0);
    expect(t.spy.stats).toEqual({ subscribeCalls: 0, active: 0 });

    t.handle.setMode("whisper");
    expect(t.spy.stats.active).toBe(2);
    t.handle.setMode("off");
    expect(t.spy.stats.active).toBe(0);
    t.handle.setMode("both");
    await t.handle.stop();
    expect(t.spy.stats.active).toBe(0);
    expect(() => t.handle.setMode("whisper")).toThrow(/stopped/);
  });

  it("does not talk to the soul forever in speak mode: the soul answering the daimon is not an exchange", async () => {
    const t = setup("speak");
    await t.exchange("hello", "hi");
    await until(() => t.fromDaimon(t.says).length === 1);
    // The soul answers what the daimon said: the daimon must not divine again on that.
    await soulSays(bus, subjects, SOUL, "Thank you, Kothar.");
    await pause(30);
    expect(t.counting.calls).toHaveLength(1);
    expect(t.fromDaimon(t.says)).toHaveLength(1);
  });

  it("ignores what is not conversation: invalid bytes, chunks, other senders' speech, scheduled events", async () => {
    const t = setup("whisper");
    await bus.publish(subjects.perceive(SOUL), new Uint8Array([0xc1, 0x00]));
    await bus.publish(subjects.says(SOUL), new Uint8Array([1, 2, 3]));
    await sayToSoul(bus, subjects, SOUL, "Bob", "question");
    await soulSays(bus, subjects, SOUL, "partial", { final: false });
    await soulSays(bus, subjects, SOUL, "another daimon talking", { from: "Tamarru" });
    await pause(30);
    expect(t.counting.calls).toHaveLength(0);
    await soulSays(bus, subjects, SOUL, "the answer");
    await until(() => t.whispers.length === 1);
    const context = t.handle.actor.getSnapshot().context;
    expect(context.transcript.map((l) => l.text)).toEqual(["question", "the answer"]);
  });

  it("divines on Groq when the registry has it, and offline by default", async () => {
    bus = createInProcessBus({ cluster: "daimon_unit" });
    const groq = countingModel('Kothar whispers: "Fast."', "groq");
    const whispers = collect(bus, subjects.whisper(SOUL)).envelopes;
    daimon = startDaimon({
      bus,
      soulId: SOUL,
      soulName: "Ann",
      daimon: { name: "Kothar", persona, mode: "whisper", everyN: 1 },
      cognition: { registry: new ModelRegistry().register("groq", groq.model).register("offline", countingModel("x", "offline").model), defaultModel: "offline:echo" },
    });
    await sayToSoul(bus, subjects, SOUL, "Bob", "hi");
    await soulSays(bus, subjects, SOUL, "hello");
    await until(() => whispers.length === 1);
    expect(groq.calls[0].model).toBe(GROQ_DEFAULT_MODEL);
    await daimon.stop();

    // No keys at all: the embedded offline model, which says plainly what it is.
    daimon = startDaimon({
      bus,
      soulId: SOUL,
      soulName: "Ann",
      daimon: { name: "Kothar", persona, mode: "whisper", everyN: 1 },
      cognition: { registry: createDefaultRegistry({}), defaultModel: "offline:echo" },
    });
    await sayToSoul(bus, subjects, SOUL, "Bob", "are you there?");
    await soulSays(bus, subjects, SOUL, "yes");
    await until(() => whispers.length === 2);
    const body = whispers[1].kind === "whisper" ? whispers[1].body : undefined;
    expect(body?.source).toBe("Kothar");
    expect(body?.content).toMatch(/offline/i);
    expect(body?.content).not.toMatch(/^Kothar whispers/);
  });

  it("rejects a bad configuration up front, with clear errors", () => {
    bus = createInProcessBus({ cluster: "daimon_unit" });
    const base = { bus, soulId: SOUL, soulName: "Ann" };
    expect(() => startDaimon({ ...base, daimon: { name: "Kothar", mode: "whisper" } })).toThrow(/needs a persona/);
    expect(() => startDaimon({ ...base, daimon: { name: "Kothar", persona, mode: "loud" as DaimonMode } })).toThrow(/mode must be one of/);
    expect(() => startDaimon({ ...base, daimon: { name: "Kothar", persona, mode: "whisper", everyN: 0 } })).toThrow(/everyN/);
    expect(() => startDaimon({ ...base, soulId: "ann.*", daimon: { name: "Kothar", persona, mode: "whisper" } })).toThrow(/soulId/);
    expect(() => startDaimon({ ...base, daimon: { name: "", persona, mode: "whisper" } })).toThrow(/daimon name/);
  });
});
