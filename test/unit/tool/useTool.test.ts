/**
 * useTool() in a soul run by createSoul with its tools given as a service: a call is gated
 * (a rejection reaches the process with the gate's reason, and a retry passes), its input is
 * checked by its zod schema, a hanging tool times out, the bouncer stops a secret in a tool's
 * input, and every call and result is a soul event.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { bouncer, createGateChain, gatedOutlet, intercept, type Gate } from "../../../actors/gate/index.ts";
import { createInProcessOutlet, createMemoryActorStore, createSoul, defineSoul, useActions, usePerceptions, useTool, type MentalProcess } from "../../../actors/soul/index.ts";
import { createToolRegistry, defineTool, ToolRejectedError, type Tool, type ToolEvent } from "../../../actors/tool/index.ts";
import { record, said } from "../../support/soul/helpers.ts";

const weather = defineTool({
  name: "weather",
  description: "The weather in a city",
  input: z.object({ city: z.string().min(1) }),
  idempotent: true,
  run: ({ city }) => ({ city, sky: city === "Paris" ? "grey" : "blue" }),
});
const hang = defineTool({ name: "hang", description: "never answers", input: z.object({}), timeoutMs: 50, run: () => new Promise<never>(() => {}) });
const echo = defineTool({ name: "echo", description: "says back", input: z.object({ text: z.string() }), run: ({ text }) => text });

/** The process asks the tool named by the perception's first word, with the rest as input (JSON). */
const process: MentalProcess = async ({ workingMemory }) => {
  const { content } = usePerceptions().invokingPerception;
  const [name, ...rest] = content.split(" ");
  const tool = useTool(name);
  let input: unknown = JSON.parse(rest.join(" "));
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      useActions().speak(`ok ${JSON.stringify(await tool(input))}`);
      return workingMemory;
    } catch (err) {
      useActions().speak(`${(err as Error).name}: ${(err as Error).message}`);
      // What a model would do with the gate's reason: choose another input and try again.
      if (!(err instanceof ToolRejectedError && err.reason.includes("Atlantis"))) return workingMemory;
      input = { city: "Paris" };
    }
  }
  return workingMemory;
};
const blueprint = defineSoul({ name: "Toolie", persona: "uses tools", initialProcess: process, processes: { process } });

const noAtlantis: Gate = {
  name: "noAtlantis",
  priority: 10,
  verify: (p) => (p.kind === "dispatch" && p.action === "tool" && JSON.stringify(p.data?.input).includes("Atlantis") ? intercept("Atlantis is not a real city") : p),
};

function soulWith(tools: Tool[], gates: Gate[] = []) {
  const outlet = gatedOutlet(createInProcessOutlet(), createGateChain(gates));
  const soul = createSoul({ blueprint, id: "s1", store: createMemoryActorStore("s1"), outlet, services: { tools: createToolRegistry(tools) } });
  const log = record(soul);
  const toolEvents = () => log.events.filter((e): e is ToolEvent => e.type.startsWith("tool."));
  return { soul, log, toolEvents };
}

async function turn(soul: ReturnType<typeof soulWith>["soul"], content: string): Promise<void> {
  await soul.perceive(said(content));
  await soul.idle();
}

describe("useTool", () => {
  it("calls a local tool and reports the call and its result as events, with an id that names the call", async () => {
    const { soul, log, toolEvents } = soulWith([weather]);
    await turn(soul, 'weather {"city":"Oslo"}');
    expect(log.said()).toEqual(['ok {"city":"Oslo","sky":"blue"}']);
    const [call, result] = toolEvents();
    expect(call).toMatchObject({ type: "tool.call", tool: "weather", input: { city: "Oslo" }, remote: false });
    expect(call.callId).toMatch(/^s1:tool:[A-Za-z0-9_-]{22}$/);
    expect(result).toMatchObject({ type: "tool.result", callId: call.callId, outcome: "ok", ok: true, value: { city: "Oslo", sky: "blue" } });
    await soul.stop();
  });

  it("refuses input that does not fit the tool's schema, with zod's account of it", async () => {
    const { soul, log, toolEvents } = soulWith([weather]);
    await turn(soul, 'weather {"city":""}');
    expect(log.said()[0]).toMatch(/^ToolInputError: invalid input for tool weather: .*city/s);
    expect(toolEvents().map((e) => e.type)).toEqual(["tool.result"]);
    await soul.stop();
  });

  it("feeds a gate's rejection back to the process, which retries and passes; the rejected input is not in the events", async () => {
    const { soul, log, toolEvents } = soulWith([weather], [noAtlantis]);
    await turn(soul, 'weather {"city":"Atlantis"}');
    expect(log.said()).toEqual(["ToolRejectedError: call of tool weather was rejected: noAtlantis: Atlantis is not a real city", 'ok {"city":"Paris","sky":"grey"}']);
    const events = toolEvents();
    expect(events.map((e) => (e.type === "tool.result" ? e.outcome : e.type))).toEqual(["rejected", "tool.call", "ok"]);
    expect(JSON.stringify(events[0])).not.toContain("Atlantis\"}");
    expect(events[0]).toMatchObject({ reason: expect.stringContaining("noAtlantis") });
    // Two calls in one turn (another input): two ids.
    expect(events[2].callId).not.toBe(events[0].callId);
    await soul.stop();
  });

  it("times out a hanging tool", async () => {
    const { soul, log, toolEvents } = soulWith([hang]);
    await turn(soul, "hang {}");
    expect(log.said()).toEqual(["ToolTimeoutError: tool hang did not answer within 50 ms"]);
    expect(toolEvents().at(-1)).toMatchObject({ outcome: "timeout", ok: false });
    await soul.stop();
  });

  it("lets the bouncer stop a secret in a tool's input, and hold a tool that is not allowlisted", async () => {
    const { soul, log, toolEvents } = soulWith([echo, weather], [bouncer({ vault: { API_KEY: "sk-live-abcdefghijklmnop1234" }, allowlist: ["echo"] })]);
    await turn(soul, 'echo {"text":"the key is sk-live-abcdefghijklmnop1234"}');
    await turn(soul, 'echo {"text":"hello"}');
    await turn(soul, 'weather {"city":"Oslo"}');
    const [secret, hello, held] = log.said();
    expect(secret).toMatch(/^ToolRejectedError: .*bouncer: outgoing dispatch contains .*blocked/);
    expect(hello).toBe('ok "hello"');
    expect(held).toMatch(/^ToolRejectedError: .*tool "weather" is not on the allowlist: held for human approval/);
    expect(JSON.stringify(toolEvents())).not.toContain("sk-live");
    await soul.stop();
  });

  it("says clearly when the soul has no such tool or no tools at all", async () => {
    const { soul, log } = soulWith([weather]);
    await turn(soul, "clock {}");
    expect(log.errors().join("\n")).toMatch(/useTool\(\): no tool named "clock"; this soul has weather/);
    await soul.stop();
    const bare = createSoul({ blueprint, id: "s2", store: createMemoryActorStore("s2") });
    const bareLog = record(bare);
    await bare.perceive(said("weather {}"));
    await bare.idle();
    expect(bareLog.errors().join("\n")).toMatch(/needs the tools service/);
    await bare.stop();
  });
});
