/**
 * A tool actor that answers with a reply PROTOCOL.md does not allow (an extension type, a fixext
 * of type 0, an integer key, invalid UTF-8, a NaN, nesting deeper than 32, trailing bytes, the
 * wrong fields), over a real bus: the in-process one and a real nats-server. Each time the soul's
 * process gets a ToolError naming the rule (never the reply's value), the `soul.tool.result`
 * event goes out on the events subject with that reason (never dropped), and nothing the reply
 * held (a token) appears in the speech, the events or the error.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryActorStore, createSoul, defineSoul, useActions, usePerceptions, useTool, type MentalProcess } from "../../../actors/soul/index.ts";
import { z } from "zod";
import { createToolRegistry, decodeToolRequest, defineTool, remoteTool } from "../../../actors/tool/index.ts";
import { clusterSubjects, connectNatsBus, createInProcessBus, decodeEnvelope, type Bus, type Envelope } from "../../../runtime/bus/index.ts";
import { createEventPublisher } from "../../../runtime/node/soulEvents.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { record, said } from "../../support/soul/helpers.ts";
import { BAD_REPLIES, TOKEN } from "../../support/tool/badToolReplies.ts";

/** Calls the `bad` tool with the case the perception names, and says what happened. */
const process: MentalProcess = async ({ workingMemory }) => {
  const which = Number(usePerceptions().invokingPerception.content);
  try {
    useActions().speak(`ok ${JSON.stringify(await useTool("bad")({ case: which }))}`);
  } catch (err) {
    useActions().speak(`${(err as Error).name}: ${(err as Error).message}`);
  }
  return workingMemory;
};
const blueprint = defineSoul({ name: "Caller", persona: "calls a bad tool", initialProcess: process, processes: { process } });

/** A tool actor outside ensoul's own: it answers each call with the bad reply its input names. */
function serveBadReplies(bus: Bus, cluster: string) {
  const sub = bus.subscribe(
    clusterSubjects(cluster).toolCall("bad"),
    (msg) => {
      const request = decodeToolRequest(msg.data);
      if (!request.ok) throw new Error(request.reason);
      msg.respond(BAD_REPLIES[(request.request.input as { case: number }).case]!.bytes);
    },
    { queue: "tool-bad" },
  );
  return sub;
}

async function callEachBadReply(soulBus: Bus, toolBus: Bus, cluster: string) {
  const served = serveBadReplies(toolBus, cluster);
  await served.accepted();
  const soul = createSoul({ blueprint, id: "s1", store: createMemoryActorStore("s1"), services: { tools: createToolRegistry([remoteTool({ bus: soulBus, cluster, name: "bad", timeoutMs: 5_000 })]) } });
  const log = record(soul);
  // The node's events publisher, as a node wires it: what it cannot encode it reports and drops.
  const dropped: string[] = [];
  const events: Envelope[] = [];
  const watching = soulBus.subscribe(clusterSubjects(cluster).events("s1"), (msg) => {
    const decoded = decodeEnvelope(msg.data);
    if (decoded.ok) events.push(decoded.envelope);
  });
  await watching.accepted();
  const publisher = createEventPublisher(soulBus, clusterSubjects(cluster), "node-1", (err, what) => dropped.push(`${what}: ${(err as Error).message}`));
  soul.onEvent((event) => publisher.soul(event));
  for (let i = 0; i < BAD_REPLIES.length; i++) {
    await soul.perceive(said(String(i)));
    await soul.idle();
  }
  const results = () => events.filter((e) => e.kind === "event" && e.body.type === "soul.tool.result").map((e) => (e.body as { data: Record<string, unknown> }).data);
  await expect.poll(() => results().length).toBe(BAD_REPLIES.length);
  await soul.stop();
  watching.unsubscribe();
  served.unsubscribe();
  return { said: log.said(), results: results(), dropped, events };
}

function expectRefusedEach(outcome: Awaited<ReturnType<typeof callEachBadReply>>) {
  expect(outcome.dropped).toEqual([]);
  BAD_REPLIES.forEach(({ what, reason }, i) => {
    // The rule, as a substring or (for a reason with an offset or a path) as a pattern.
    const rule = typeof reason === "string" ? reason : new RegExp(reason.source.replace(/^\^|\$$/g, ""));
    expect(outcome.said[i], what).toMatch(/^ToolError: tool bad sent a reply that is refused: /);
    expect(outcome.said[i], what).toMatch(rule);
    expect(outcome.results[i], what).toMatchObject({ tool: "bad", outcome: "error", ok: false });
    expect(outcome.results[i]!.reason, what).toMatch(rule);
    expect(outcome.results[i], what).not.toHaveProperty("value");
  });
  // Not a piece of the token anywhere: speech, events (whole envelopes), the refusals.
  const everything = JSON.stringify([outcome.said, outcome.events]);
  expect(everything).not.toContain(TOKEN.slice(0, 10));
  expect(everything).not.toContain(TOKEN.slice(-10));
}

describe("bad tool replies on the in-process bus", () => {
  it("each is refused with its rule, reported on the events subject, and quoted nowhere", async () => {
    const bus = createInProcessBus({ cluster: "replies" });
    expectRefusedEach(await callEachBadReply(bus, bus, "replies"));
    await bus.close();
  });
});

describe("a local tool's result the events subject cannot carry (a Date)", () => {
  it("reaches the process as it is, and its result event goes out without the value, saying why", async () => {
    const bus = createInProcessBus({ cluster: "local" });
    const stamp = defineTool({ name: "bad", description: "a time", input: z.object({ case: z.number() }), idempotent: true, run: () => ({ at: new Date(0) }) });
    const got: unknown[] = [];
    const keep: MentalProcess = async ({ workingMemory }) => {
      got.push(await useTool("bad")({ case: 0 }));
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "Keeper", persona: "keeps", initialProcess: keep, processes: { keep } }), id: "s1", store: createMemoryActorStore("s1"), services: { tools: createToolRegistry([stamp]) } });
    const dropped: string[] = [];
    const events: Envelope[] = [];
    const watching = bus.subscribe(clusterSubjects("local").events("s1"), (msg) => {
      const decoded = decodeEnvelope(msg.data);
      if (decoded.ok) events.push(decoded.envelope);
    });
    const publisher = createEventPublisher(bus, clusterSubjects("local"), "node-1", (err, what) => dropped.push(`${what}: ${(err as Error).message}`));
    soul.onEvent((event) => publisher.soul(event));
    await soul.perceive(said("go"));
    await soul.idle();
    expect(got).toEqual([{ at: new Date(0) }]);
    const result = () => events.find((e) => e.kind === "event" && e.body.type === "soul.tool.result")?.body as { data: Record<string, unknown> } | undefined;
    await expect.poll(() => result()).toBeDefined();
    expect(dropped).toEqual([]);
    expect(result()!.data).toMatchObject({ tool: "bad", outcome: "ok", ok: true, reason: "the value is not sent with this event: value.at is a Date, not a map" });
    expect(result()!.data).not.toHaveProperty("value");
    await soul.stop();
    watching.unsubscribe();
    await bus.close();
  });
});

describeWithNats("bad tool replies on a real nats-server", () => {
  let server: NatsServerHandle;
  beforeAll(async () => {
    server = await startNatsServer({});
  });
  afterAll(async () => {
    await server?.dispose();
  });

  it("each is refused with its rule, reported on the events subject, and quoted nowhere", async () => {
    const cluster = `replies_${globalThis.process.pid}`;
    const toolNode = await connectNatsBus({ servers: server.url, cluster, name: "tool-node", storage: "memory" });
    const soulNode = await connectNatsBus({ servers: server.url, cluster, name: "soul-node", storage: "memory" });
    try {
      expectRefusedEach(await callEachBadReply(soulNode, toolNode, cluster));
    } finally {
      await toolNode.close();
      await soulNode.close();
    }
  });
});
