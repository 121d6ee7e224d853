import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DAIMONIC_REGION, DAIMONIC_WHISPER_KEY, formatDaimonicIntuition, readDaimonicWhisper } from "../../../actors/daimon/index.ts";
import { createSoul, defineSoul, useSoulMemory, type MentalProcess } from "../../../actors/soul/index.ts";
import type { WorkingMemory } from "../../../runtime/cognition/index.ts";
import { createInProcessBus, type Bus } from "../../../runtime/bus/index.ts";
import { openStore, type Store } from "../../../runtime/store/index.ts";
import { until } from "../../unit/daimon/daimonTestKit.ts";
import { recalledIntuition, startScenario, type Scenario } from "./scenario.ts";

const WHISPER = { content: "They need assurance, not answers.", source: "Kothar" };

let scenario: Scenario | undefined;
let bus: Bus | undefined;
afterEach(async () => {
  await scenario?.close();
  await bus?.close();
  scenario = undefined;
  bus = undefined;
});

describe("a daimon beside a real soul (in-process bus, LMDB)", () => {
  it("observes the conversation, whispers, and the soul keeps the whisper for exactly one successful turn", async () => {
    bus = createInProcessBus({ cluster: "daimon_it" });
    const s = (scenario = await startScenario(bus, bus));

    await s.say("Will it really be fine?");
    // The daimon heard the exchange, divined with its own model, and whispered on the bus;
    // the soul stored the whisper durably, without a turn.
    await until(() => readDaimonicWhisper(s.storedSoulMemory() ?? {}) !== undefined, 5000, "the whisper in LMDB");
    expect(s.storedSoulMemory()?.[DAIMONIC_WHISPER_KEY]).toEqual(WHISPER);
    expect(s.daimonCalls).toHaveLength(1);
    expect(s.daimonCalls[0].messages.some((m) => m.content.includes("Bob: Will it really be fine?"))).toBe(true);
    expect(recalledIntuition(s.soulCalls[0])).toBeUndefined();
    s.daimon.setMode("off");

    // A failed turn does not use the whisper up.
    await s.say("fail");
    expect(s.soulCalls).toHaveLength(1);
    expect(s.storedSoulMemory()?.[DAIMONIC_WHISPER_KEY]).toEqual(WHISPER);

    // The next successful turn recalls it as the soul's own intuition...
    await s.say("And now?");
    expect(s.soulCalls).toHaveLength(2);
    expect(recalledIntuition(s.soulCalls[1])).toBe(formatDaimonicIntuition("Ann", WHISPER));
    expect(s.soulCalls[1].messages.filter((m) => m.role === "system" && m.content.includes("whispers"))).toEqual([]);
    // ...and consumes it: gone from LMDB, and not left behind in the conversation.
    expect(s.storedSoulMemory()?.[DAIMONIC_WHISPER_KEY]).toBeNull();
    expect(s.soul.memory().workingMemory.memories.some((m) => m.region === DAIMONIC_REGION)).toBe(false);

    await s.say("And then?");
    expect(recalledIntuition(s.soulCalls[2])).toBeUndefined();
    expect(s.daimonCalls).toHaveLength(1);
  });
});

/**
 * What the soul runtime does itself, with no help from the blueprint: it recalls a pending
 * whisper into one successful turn and consumes it, and a turn that only read the whisper
 * does not overwrite one that arrived while it ran.
 */
describe("the soul runtime's own handling of whispers", () => {
  let store: Store | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    store = undefined;
    dir = undefined;
  });
  const open = () => {
    dir = mkdtempSync(join(tmpdir(), "ensoul-daimon-gap-"));
    store = openStore({ path: dir, noSync: true });
    return store.actor("gap");
  };

  it("the runtime injects a pending whisper as recall and consumes it after one successful turn, without the blueprint's help", async () => {
    const seen: WorkingMemory[] = [];
    const plain: MentalProcess = async ({ workingMemory }) => {
      seen.push(workingMemory);
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "Gap", persona: "", initialProcess: plain, processes: { plain } }), id: "gap", store: open() });
    try {
      await soul.whisper(WHISPER.content, WHISPER.source);
      await soul.perceive({ action: "said", content: "hi", name: "Bob" });
      await soul.idle();
      expect(seen[0].memories.some((m) => m.region === DAIMONIC_REGION && m.role === "assistant")).toBe(true);
      expect(soul.memory().soulMemory[DAIMONIC_WHISPER_KEY] ?? null).toBeNull();
    } finally {
      await soul.stop();
    }
  });

  it("a whisper that arrives during a turn survives that turn, even when the turn read the previous whisper", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const reader: MentalProcess = async ({ workingMemory }) => {
      void useSoulMemory(DAIMONIC_WHISPER_KEY, null).current; // only reads it
      started();
      await gate;
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "Gap", persona: "", initialProcess: reader, processes: { reader } }), id: "gap", store: open() });
    try {
      await soul.whisper("first", "Kothar");
      await soul.perceive({ action: "said", content: "hi", name: "Bob" });
      await running;
      await soul.whisper("second", "Kothar");
      release();
      await soul.idle();
      expect(soul.memory().soulMemory[DAIMONIC_WHISPER_KEY]).toEqual({ content: "second", source: "Kothar" });
    } finally {
      await soul.stop();
    }
  });
});
