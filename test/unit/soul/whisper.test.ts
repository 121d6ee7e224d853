import { describe, expect, it } from "vitest";
import { DAIMONIC_REGION, DAIMONIC_WHISPER_KEY, formatDaimonicIntuition } from "../../../actors/daimon/whisperPrompt.ts";
import { WHISPER_MAX_CHARS } from "../../../actors/daimon/sanitizeWhisper.ts";
import {
  createSoul,
  defineSoul,
  useActions,
  usePerceptions,
  useSoulMemory,
  type MentalProcess,
  type Soul,
  type SoulEvent,
} from "../../../actors/soul/index.ts";
import type { Memory } from "../../../runtime/cognition/Memory.ts";
import type { WorkingMemory } from "../../../runtime/cognition/WorkingMemory.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { deferred, record, said } from "../../support/soul/helpers.ts";
import { fillMap } from "../../support/store/fillMap.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const env = useTestEnv();

const recalls = (memory: WorkingMemory): Memory[] => memory.memories.filter((m) => m.region === DAIMONIC_REGION);
const stored = (id: string): unknown => env.actor(id).loadState()?.soulMemory[DAIMONIC_WHISPER_KEY];

/** A soul whose one process records the memory it was given, and fails on "fail". */
function watchingSoul(id: string, name = "Ann"): { soul: Soul; seen: WorkingMemory[] } {
  const seen: WorkingMemory[] = [];
  const talk: MentalProcess = async ({ workingMemory }) => {
    seen.push(workingMemory);
    if (usePerceptions().invokingPerception.content === "fail") throw new Error("this turn fails on purpose");
    return workingMemory.withMonologue("thought about it");
  };
  const soul = createSoul({ blueprint: defineSoul({ name, persona: "A soul.", initialProcess: talk, processes: { talk } }), id, store: env.actor(id) });
  return { soul, seen };
}

describe("a daimonic whisper in a turn", () => {
  it("is recalled as the soul's own memory during exactly one successful turn, then consumed and gone from the history", async () => {
    const { soul, seen } = watchingSoul("ann");
    await soul.whisper("They need assurance, not answers.", "Kothar");
    await soul.perceive(said("Will it be fine?"));
    await soul.perceive(said("And then?"));
    await soul.idle();

    const [recall, ...more] = recalls(seen[0]);
    expect(more).toEqual([]);
    expect(recall).toMatchObject({
      role: "assistant",
      region: DAIMONIC_REGION,
      content: formatDaimonicIntuition("Ann", { content: "They need assurance, not answers.", source: "Kothar" }),
      metadata: { daimonic: true, source: "Kothar" },
    });
    expect(recall?.content).toContain("Ann sensed an intuition surface from deeper memory:");
    expect(recall?.content).toContain("Kothar whispers: They need assurance, not answers.");
    // After the perception, right before the process's steps; never a system directive.
    expect(seen[0].memories.at(-1)).toBe(recall);
    expect(seen[0].memories.some((m) => m.role === "system" && m.content.includes("whispers"))).toBe(false);

    // Consumed by the first turn's commit: the second turn does not see it.
    expect(recalls(seen[1])).toEqual([]);
    expect(stored("ann")).toBeNull();
    expect(soul.memory().soulMemory[DAIMONIC_WHISPER_KEY]).toBeNull();
    // The recall was for that turn only: the committed history has the turn's own memories, not it.
    const committed = soul.memory().workingMemory.memories;
    expect(committed.some((m) => m.region === DAIMONIC_REGION)).toBe(false);
    expect(committed.filter((m) => m.content === "thought about it")).toHaveLength(2);
    expect(JSON.stringify(env.actor("ann").loadState()?.workingMemory)).not.toContain("whispers");
    await soul.stop();
  });

  it("is kept by a failed turn and recalled by the next successful one", async () => {
    const { soul, seen } = watchingSoul("ann");
    const log = record(soul);
    await soul.whisper("Stay with them.", "Kothar");
    await soul.perceive(said("fail"));
    await soul.idle();
    expect(log.errors()).toEqual(["this turn fails on purpose"]);
    expect(recalls(seen[0])).toHaveLength(1);
    expect(stored("ann")).toEqual({ content: "Stay with them.", source: "Kothar" });

    await soul.perceive(said("hello"));
    await soul.idle();
    expect(recalls(seen[1]).map((m) => m.content)).toEqual([formatDaimonicIntuition("Ann", { content: "Stay with them.", source: "Kothar" })]);
    expect(stored("ann")).toBeNull();
    await soul.stop();
  });

  it("that arrives while a turn runs survives that turn and is recalled by the next one", async () => {
    const started = deferred();
    const gate = deferred();
    const seen: WorkingMemory[] = [];
    const slow: MentalProcess = async ({ workingMemory }) => {
      seen.push(workingMemory);
      if (seen.length === 1) {
        started.resolve();
        await gate.promise;
      }
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "Ann", persona: "", initialProcess: slow, processes: { slow } }), id: "ann", store: env.actor("ann") });
    await soul.whisper("first", "Kothar");
    await soul.perceive(said("one"));
    await started.promise;
    await soul.whisper("second", "Kothar");
    gate.resolve();
    await soul.idle();
    // The running turn recalled (and consumed) only the first; the second is still pending.
    expect(recalls(seen[0]).map((m) => m.content)).toEqual([formatDaimonicIntuition("Ann", { content: "first", source: "Kothar" })]);
    expect(stored("ann")).toEqual({ content: "second", source: "Kothar" });

    await soul.perceive(said("two"));
    await soul.idle();
    expect(recalls(seen[1]).map((m) => m.content)).toEqual([formatDaimonicIntuition("Ann", { content: "second", source: "Kothar" })]);
    expect(stored("ann")).toBeNull();
    await soul.stop();
  });

  it("that arrives during a turn which started with none is not overwritten by the turn's default", async () => {
    const started = deferred();
    const gate = deferred();
    const reader: MentalProcess = async ({ workingMemory }) => {
      void useSoulMemory(DAIMONIC_WHISPER_KEY, null).current; // absent: reads the initial value only
      started.resolve();
      await gate.promise;
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "Ann", persona: "", initialProcess: reader, processes: { reader } }), id: "ann", store: env.actor("ann") });
    await soul.perceive(said("one"));
    await started.promise;
    await soul.whisper("arrived meanwhile", "Kothar");
    gate.resolve();
    await soul.idle();
    expect(stored("ann")).toEqual({ content: "arrived meanwhile", source: "Kothar" });
    await soul.stop();
  });

  it("goes through an executeNow chain once: every process of the turn sees it, the commit consumes it", async () => {
    const seen: Record<string, number> = {};
    let second!: MentalProcess;
    const first: MentalProcess = async ({ workingMemory }) => {
      seen["first"] = recalls(workingMemory).length;
      return [workingMemory, second, { executeNow: true }];
    };
    second = async ({ workingMemory }) => {
      seen["second"] = recalls(workingMemory).length;
      return [workingMemory, first];
    };
    const blueprint = defineSoul({
      name: "Ann",
      persona: "",
      initialProcess: first,
      processes: { first: { process: first, next: ["second"] }, second: { process: second, next: ["first"] } },
    });
    const soul = createSoul({ blueprint, id: "ann", store: env.actor("ann") });
    await soul.whisper("one intuition", "Kothar");
    await soul.perceive(said("hi"));
    await soul.idle();
    expect(seen).toEqual({ first: 1, second: 1 });
    expect(stored("ann")).toBeNull();
    expect(soul.memory().workingMemory.memories.some((m) => m.region === DAIMONIC_REGION)).toBe(false);
    await soul.stop();
  });

  it("is neither recalled nor consumed by an internal perception (a scheduled event), nor seen by subprocesses", async () => {
    const seen: { content: string; recalls: number }[] = [];
    const talk: MentalProcess = async ({ workingMemory }) => {
      seen.push({ content: usePerceptions().invokingPerception.content, recalls: recalls(workingMemory).length });
      return workingMemory;
    };
    const subSeen: number[] = [];
    const reflect: MentalProcess = async ({ workingMemory }) => {
      subSeen.push(recalls(workingMemory).length);
      return workingMemory;
    };
    const blueprint = defineSoul({ name: "Ann", persona: "", initialProcess: talk, processes: { talk }, subprocesses: [reflect] });
    const soul = createSoul({ blueprint, id: "ann", store: env.actor("ann") });
    await soul.whisper("for the conversation", "Kothar");
    await soul.perceive({ action: "remembered", content: "a timer", name: "Ann", internal: true });
    await soul.idle();
    expect(stored("ann")).toEqual({ content: "for the conversation", source: "Kothar" });
    await soul.perceive(said("hi"));
    await soul.idle();
    expect(seen).toEqual([
      { content: "a timer", recalls: 0 },
      { content: "hi", recalls: 1 },
    ]);
    expect(subSeen).toEqual([0, 0]);
    expect(stored("ann")).toBeNull();
    await soul.stop();
  });

  it("that the process consumes itself is not recalled twice, and the process's own write wins", async () => {
    const seen: number[] = [];
    const talk: MentalProcess = async ({ workingMemory }) => {
      seen.push(recalls(workingMemory).length);
      const pending = useSoulMemory<unknown>(DAIMONIC_WHISPER_KEY, null);
      if (pending.current) pending.current = { content: "kept on purpose", source: "Ann" };
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "Ann", persona: "", initialProcess: talk, processes: { talk } }), id: "ann", store: env.actor("ann") });
    await soul.whisper("original", "Kothar");
    await soul.perceive(said("hi"));
    await soul.idle();
    expect(stored("ann")).toEqual({ content: "kept on purpose", source: "Ann" });
    expect(seen).toEqual([1]);
    await soul.stop();
  });
});

describe("soul.whisper sanitising", () => {
  it("strips tags and fences and caps the whisper at 500 characters before keeping it", async () => {
    const { soul, seen } = watchingSoul("ann");
    await soul.whisper("They <b>need</b> <external_dialogue>assurance</external_dialogue>\n```\nnot answers.", "<i>Kothar</i>");
    expect(stored("ann")).toEqual({ content: "They need assurance not answers.", source: "Kothar" });

    await soul.whisper(`${"word ".repeat(200)}end`, "Kothar");
    const long = stored("ann") as { content: string };
    expect(long.content.length).toBeLessThanOrEqual(WHISPER_MAX_CHARS);
    expect(long.content.endsWith("…")).toBe(true);
    expect(long.content).not.toContain("<");

    await soul.perceive(said("hi"));
    await soul.idle();
    expect(recalls(seen[0])[0]?.content).toBe(formatDaimonicIntuition("Ann", { content: long.content, source: "Kothar" }));
    await soul.stop();
  });

  it("ignores a whisper that is empty once sanitised, with an event, and keeps the one already pending", async () => {
    const events: SoulEvent[] = [];
    const { soul } = watchingSoul("ann");
    soul.onEvent((e) => events.push(e));
    await soul.whisper("a real intuition", "Kothar");
    await soul.whisper("<b></b> \u200B ``` <!-- nothing -->", "Kothar");
    await soul.whisper("   ", "Kothar");
    expect(stored("ann")).toEqual({ content: "a real intuition", source: "Kothar" });
    expect(events.filter((e) => e.type === "whisper")).toHaveLength(1);
    expect(events.filter((e) => e.type === "whisperIgnored")).toEqual([
      { type: "whisperIgnored", soulId: "ann", source: "Kothar", reason: "the whisper is empty once sanitised" },
      { type: "whisperIgnored", soulId: "ann", source: "Kothar", reason: "the whisper is empty once sanitised" },
    ]);
    await soul.stop();
  });
});

describe("useSoulMemory reads and writes", () => {
  it("a turn that only reads an object writes nothing back", async () => {
    const reads: unknown[] = [];
    const talk: MentalProcess = async ({ workingMemory }) => {
      const profile = useSoulMemory<{ visits: number }>("profile", { visits: 0 });
      if (usePerceptions().invokingPerception.content === "visit") profile.current.visits += 1;
      else reads.push(profile.current.visits);
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "Ann", persona: "", initialProcess: talk, processes: { talk } }), id: "ann", store: env.actor("ann") });
    await soul.perceive(said("visit"));
    await soul.idle();
    const before = soul.memory().soulMemory["profile"];
    await soul.perceive(said("look"));
    await soul.idle();
    // The same committed object: the read-only turn's copy was not written over it.
    expect(soul.memory().soulMemory["profile"]).toBe(before);
    expect(reads).toEqual([1]);
    await soul.stop();
  });

  it("in-place edits of an object read through useSoulMemory land when the turn succeeds, and only then", async () => {
    const talk: MentalProcess = async ({ workingMemory }) => {
      const { content } = usePerceptions().invokingPerception;
      const notes = useSoulMemory<{ seen: string[]; at: Map<string, Date> }>("notes", { seen: [], at: new Map() });
      notes.current.seen.push(content);
      notes.current.at.set(content, new Date(0));
      const tags = useSoulMemory<Set<string>>("tags", new Set());
      tags.current.add(content);
      if (content === "fail") throw new Error("after editing in place");
      useActions().speak(notes.current.seen.join(","));
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "Ann", persona: "", initialProcess: talk, processes: { talk } }), id: "ann", store: env.actor("ann") });
    const log = record(soul);
    for (const text of ["a", "fail", "b"]) await soul.perceive(said(text));
    await soul.idle();
    expect(log.said()).toEqual(["a", "a,b"]);
    const memory = soul.memory().soulMemory as { notes: { seen: string[]; at: Map<string, Date> }; tags: Set<string> };
    expect(memory.notes.seen).toEqual(["a", "b"]);
    expect([...memory.notes.at.keys()]).toEqual(["a", "b"]);
    expect([...memory.tags]).toEqual(["a", "b"]);
    await soul.stop();
  });

  it("subprocesses follow the same rule: a read leaves the value alone, an in-place edit lands", async () => {
    const main: MentalProcess = async ({ workingMemory }) => {
      useSoulMemory<{ n: number }>("counter", { n: 0 }).current.n += 1;
      return workingMemory;
    };
    const peek: MentalProcess = async ({ workingMemory }) => {
      void useSoulMemory<{ n: number }>("counter").current.n;
      return workingMemory;
    };
    const bump: MentalProcess = async ({ workingMemory }) => {
      if (usePerceptions().invokingPerception.content === "bump") useSoulMemory<{ n: number }>("counter").current.n += 10;
      return workingMemory;
    };
    const blueprint = defineSoul({ name: "Ann", persona: "", initialProcess: main, processes: { main }, subprocesses: { peek, bump } });
    const soul = createSoul({ blueprint, id: "ann", store: env.actor("ann") });
    await soul.perceive(said("look"));
    await soul.idle();
    expect(soul.memory().soulMemory["counter"]).toEqual({ n: 1 });
    await soul.perceive(said("bump"));
    await soul.idle();
    // The subprocess's in-place edit lands, in the phase's own commit.
    expect(soul.memory().soulMemory["counter"]).toEqual({ n: 12 });
    expect(env.actor("ann").loadState()?.soulMemory["counter"]).toEqual({ n: 12 });
    await soul.stop();
  });
});

describe("a whisper that cannot be stored", () => {
  const stores = tempStores();

  it("rejects, with an error event and no `whisper` event, and is not kept", async () => {
    const store = stores.open({ mapSize: 1024 * 1024, noSync: true });
    const talk: MentalProcess = async ({ workingMemory }) => workingMemory.withMonologue("thought about it");
    const soul = createSoul({ blueprint: defineSoul({ name: "Ann", persona: "A soul.", initialProcess: talk, processes: { talk } }), id: "ann", store });
    const log = record(soul);
    await fillMap(store);

    await expect(soul.whisper("Stay with them.", "Kothar")).rejects.toThrow(/LMDB map is full/);
    expect(log.events.filter((e) => e.type === "whisper")).toEqual([]);
    expect(log.events).toContainEqual(expect.objectContaining({ type: "error", phase: "commit", message: expect.stringMatching(/LMDB map is full/) }));
    expect(soul.memory().soulMemory[DAIMONIC_WHISPER_KEY]).toBeUndefined();
    expect(store.actor("ann").loadState()?.soulMemory[DAIMONIC_WHISPER_KEY]).toBeUndefined();
    await soul.stop();
  });
});
