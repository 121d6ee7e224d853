/**
 * Kothar beside a real Claudius on an in-process bus: Claudius on the real Anthropic SDK,
 * Kothar on the real Groq SDK (its model chosen because GROQ_API_KEY is "set"), both against
 * local scripted servers. Kothar whispers; Claudius senses the whisper once, in his pipeline's
 * intuition section, on his next turn, and it is consumed. Switched to speak mode, Kothar says
 * his intuition aloud under his own name, and Claudius hears him.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DAIMONIC_REGION, DAIMONIC_WHISPER_KEY, startDaimon, type DaimonHandle } from "../../../actors/daimon/index.ts";
import { createInProcessBus, type Bus } from "../../../runtime/bus/index.ts";
import type { CognitionContext } from "../../../runtime/cognition/index.ts";
import { createAnthropicModel, createGroqModel, ModelRegistry } from "../../../runtime/providers/index.ts";
import { claudius } from "../../../souls/claudius/index.ts";
import { builtinDaimons } from "../../../souls/index.ts";
import { kothar, kotharDaimon, KOTHAR_GROQ_MODEL } from "../../../souls/kothar/index.ts";
import { startAnthropicServer } from "../../support/wire/anthropicServer.ts";
import { startGroqServer } from "../../support/wire/groqServer.ts";
import type { ScriptedServer } from "../../support/wire/scriptedServer.ts";
import { startClaudiusRig, type ClaudiusRig } from "../../support/souls/claudiusRig.ts";
import { pipelineAnswer } from "../../support/souls/pipelineAnswer.ts";
import { soulOnBus, until, type SoulOnBus } from "../../support/souls/soulOnBus.ts";
import { occurrences, promptText, wireScript } from "../../support/souls/wireScript.ts";

let anthropic: ScriptedServer;
let groq: ScriptedServer;
let bus: Bus | undefined;
let rig: ClaudiusRig | undefined;
let wiring: SoulOnBus | undefined;
let daimon: DaimonHandle | undefined;

beforeAll(async () => {
  anthropic = await startAnthropicServer();
  groq = await startGroqServer();
});
afterAll(async () => {
  await anthropic.close();
  await groq.close();
});
afterEach(async () => {
  await daimon?.stop();
  wiring?.close();
  await rig?.close();
  await bus?.close();
  daimon = undefined;
  wiring = undefined;
  rig = undefined;
  bus = undefined;
  anthropic.reset();
  groq.reset();
});

const claudiusCognition = (): CognitionContext => ({
  registry: new ModelRegistry().register("anthropic", createAnthropicModel({ apiKey: "test", baseURL: anthropic.url })),
  defaultModel: "anthropic:claude-test",
});

const kotharCognition = (): CognitionContext => ({
  registry: new ModelRegistry().register("groq", createGroqModel({ apiKey: "test", baseURL: groq.url })),
  defaultModel: "groq:llama-3.3-70b-versatile",
});

const WHISPER = "The iron is harder than the hand that holds it.";
const SPOKEN = "A clamp that slips was never the clamp's fault.";

describe("Kothar, Claudius's daimon, on an in-process bus", () => {
  it("is registered as builtinDaimons.kothar", () => {
    expect(builtinDaimons["kothar"]).toBe(kothar);
    expect(kothar).toMatchObject({ name: "Kothar", mode: "whisper" });
    expect(kothar.persona).toContain("Kothar-wa-Khasis");
  });

  it("whispers to Claudius, who senses it once and consumes it; in speak mode it speaks under its own name", async () => {
    bus = createInProcessBus({ cluster: "claudius_kothar" });
    const souls = wireScript(anthropic);
    const divinations = wireScript(groq);
    rig = await startClaudiusRig({ blueprint: () => claudius, cognition: claudiusCognition(), requestCount: () => souls.requests.length });
    const r = rig;
    const w = (wiring = soulOnBus(bus, r.soul()));
    daimon = startDaimon({
      bus,
      soulId: r.id,
      soulName: "Claudius",
      // As in an environment with GROQ_API_KEY set; every exchange, so the test stays short.
      daimon: kotharDaimon({ env: { GROQ_API_KEY: "test" }, everyN: 1 }),
      cognition: kotharCognition(),
    });
    const turns = () => r.events.filter((e) => e.type === "turn").length;
    const say = async (content: string) => {
      const before = turns();
      await w.say("Tom", content);
      await until(() => turns() > before, 10_000, `Claudius's turn for "${content}"`);
      await r.soul().idle();
    };

    // Turn 1: Claudius greets; Kothar watches the exchange and whispers.
    souls.script("pipeline", pipelineAnswer({ monologue: "A newcomer.", dialogue: "Claudius. What are you making?", userModelCheck: false }));
    divinations.script("divination", `Kothar whispers: "${WHISPER}"`);
    await say("Hello, I'm Tom. My plane iron won't hold an edge.");
    await until(() => w.whispers === 1, 10_000, "Kothar's whisper kept by Claudius");
    expect(r.soul().memory().soulMemory[DAIMONIC_WHISPER_KEY]).toEqual({ content: WHISPER, source: "Kothar" });
    const divination = divinations.requests[0];
    expect(divination.body?.["model"]).toBe(KOTHAR_GROQ_MODEL.slice("groq:".length));
    expect(promptText(divination)).toContain("Kothar-wa-Khasis");
    expect(promptText(divination)).toContain("My plane iron won't hold an edge.");
    // Claudius did not hear it before it was whispered.
    expect(promptText(souls.requests[0])).not.toContain("whispers:");
    daimon.setMode("off");

    // Turn 2: the whisper is in the pipeline's intuition section, as Claudius's own recall, exactly once.
    souls.script("pipeline", pipelineAnswer({ monologue: "Soft steel, or a soft hand.", dialogue: "Check the hardness before you blame the stone.", userModelCheck: false }));
    await say("What should I check first?");
    const request = souls.requests[1];
    const prompt = promptText(request);
    expect(occurrences(prompt, "## Daimonic Intuition")).toBe(1);
    expect(occurrences(prompt, `Kothar whispers: ${WHISPER}`)).toBe(1);
    expect(prompt).toContain("Claudius sensed an intuition surface from deeper memory");
    const messages = request.body?.["messages"] as { role: string; content: string }[];
    expect(messages.find((m) => m.content.includes("Kothar whispers:"))?.role).toBe("assistant");
    expect(typeof request.body?.["system"] === "string" && (request.body["system"] as string).includes("Kothar whispers:")).toBe(false);
    // Consumed by the turn, and not left in the conversation.
    expect(r.soul().memory().soulMemory[DAIMONIC_WHISPER_KEY]).toBeNull();
    expect(r.soul().memory().workingMemory.memories.some((m) => m.region === DAIMONIC_REGION || m.content.includes("Kothar whispers"))).toBe(false);

    // Turn 3 (speak mode): Kothar says his intuition aloud under his own name; Claudius hears him and answers.
    daimon.setMode("speak");
    souls.script(
      "pipeline",
      pipelineAnswer({ monologue: "Clamping again.", dialogue: "Tighten the clamp before you hone.", userModelCheck: false }),
      pipelineAnswer({ monologue: "Kothar, as ever, oblique.", dialogue: "Quite. The fault is in the setup.", userModelCheck: false }),
    );
    divinations.script("divination", `Kothar whispers: "${SPOKEN}"`);
    await say("And the jig keeps slipping.");
    await until(() => turns() >= 4, 10_000, "Claudius's answer to Kothar");
    daimon.setMode("off");
    await r.soul().idle();

    const kotharSpeech = w.heard.filter((e) => e.from === "Kothar");
    expect(kotharSpeech).toHaveLength(1);
    expect(kotharSpeech[0].body.text).toBe(SPOKEN);
    // Speaking is not whispering: nothing new was whispered to Claudius.
    expect(w.whispers).toBe(1);
    expect(r.soul().memory().soulMemory[DAIMONIC_WHISPER_KEY]).toBeNull();
    // Claudius heard Kothar as a voice in the room, by name, and answered him.
    const heardKothar = promptText(souls.requests[3]);
    expect(heardKothar).toContain(`Kothar: ${SPOKEN}`);
    expect(heardKothar).not.toContain("## Daimonic Intuition");
    expect(r.speech.map((p) => p.content)).toEqual([
      "Claudius. What are you making?",
      "Check the hardness before you blame the stone.",
      "Tighten the clamp before you hone.",
      "Quite. The fault is in the setup.",
    ]);
    await until(() => w.heard.filter((e) => e.from === r.id).length === 4, 5000, "Claudius's four answers on the says subject");
    expect(souls.left()).toEqual({});
    expect(divinations.left()).toEqual({});
  });
});
