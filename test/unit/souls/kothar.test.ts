import { afterEach, describe, expect, it } from "vitest";
import { startDaimon, type DaimonHandle } from "../../../actors/daimon/index.ts";
import { clusterSubjects, createInProcessBus, decodeEnvelope, encodeEnvelope, makeEnvelope, type Bus, type Envelope } from "../../../runtime/bus/index.ts";
import { kothar, kotharDaimon, kotharPersona, KOTHAR_EVERY_N, KOTHAR_GROQ_MODEL } from "../../../souls/kothar/index.ts";
import { queueCognition, queueModel, requestText } from "../../support/souls/queueModel.ts";
import { until } from "../../support/souls/soulOnBus.ts";

describe("Kothar's definition", () => {
  it("runs on Groq's llama-3.1-8b-instant when GROQ_API_KEY is set", () => {
    expect(kotharDaimon({ env: { GROQ_API_KEY: "gsk_x" } })).toMatchObject({ name: "Kothar", model: KOTHAR_GROQ_MODEL, mode: "whisper", everyN: KOTHAR_EVERY_N });
    expect(KOTHAR_GROQ_MODEL).toBe("groq:llama-3.1-8b-instant");
  });

  it("names no model otherwise, so it divines with the context default (offline without keys)", () => {
    expect(kotharDaimon({ env: {} }).model).toBeUndefined();
    expect(kotharDaimon({ env: { GROQ_API_KEY: "  " } }).model).toBeUndefined();
    expect(kotharDaimon({ env: {}, model: "offline:echo" }).model).toBe("offline:echo");
  });

  it("has its own persona: the craftsman god, terse and oblique", () => {
    expect(kotharPersona).toContain("Kothar-wa-Khasis");
    expect(kotharPersona).toMatch(/Terse and oblique/);
    expect(kothar.persona).toBe(kotharPersona);
    expect(kothar.mode).toBe("whisper");
  });
});

describe("Kothar in speak mode", () => {
  let bus: Bus | undefined;
  let daimon: DaimonHandle | undefined;
  afterEach(async () => {
    await daimon?.stop();
    await bus?.close();
    daimon = undefined;
    bus = undefined;
  });

  it("says its intuition on the soul's says subject under its own name, and the soul hears it as a perception", async () => {
    bus = createInProcessBus({ cluster: "kothar_unit" });
    const subjects = clusterSubjects(bus.cluster);
    const model = queueModel();
    model.answer('Kothar whispers: "The grain runs the other way."');
    daimon = startDaimon({
      bus,
      soulId: "claudius",
      soulName: "Claudius",
      daimon: kotharDaimon({ env: {}, mode: "speak", everyN: 1 }),
      cognition: queueCognition(model),
    });
    expect(daimon.mode).toBe("speak");
    const says: Envelope[] = [];
    const perceived: Envelope[] = [];
    const whispered: Envelope[] = [];
    const collect = (into: Envelope[]) => (msg: { data: Uint8Array }) => {
      const d = decodeEnvelope(msg.data);
      if (d.ok) into.push(d.envelope);
    };
    bus.subscribe(subjects.says("claudius"), collect(says));
    bus.subscribe(subjects.perceive("claudius"), collect(perceived));
    bus.subscribe(subjects.whisper("claudius"), collect(whispered));

    const hello = makeEnvelope("perception", "bridge-test", "claudius", { action: "said", content: "My plane chatters.", name: "Tom" });
    await bus.publish(subjects.perceive("claudius"), encodeEnvelope(hello));
    const reply = makeEnvelope("speech", "claudius", "bridge-test", { proposalId: "claudius:1:0", text: "Check the frog.", final: true });
    await bus.publish(subjects.says("claudius"), encodeEnvelope(reply));

    await until(() => says.some((e) => e.from === "Kothar"), 5000, "Kothar's speech");
    const spoken = says.find((e) => e.from === "Kothar") as Envelope<"speech">;
    expect(spoken.body.text).toBe("The grain runs the other way.");
    await until(() => perceived.some((e) => e.from === "Kothar"), 5000, "Kothar's perception");
    expect((perceived.find((e) => e.from === "Kothar") as Envelope<"perception">).body).toMatchObject({ name: "Kothar", content: "The grain runs the other way." });
    expect(whispered).toEqual([]);
    // Its own persona divined it.
    expect(requestText(model.requests[0])).toContain("Kothar-wa-Khasis");
  });
});
