/**
 * Tool actors on a real nats-server: a soul on one connection calls a tool served on another
 * (two instances in one queue group, each call answered once), through useTool and its
 * gates; input errors and timeouts cross the wire as what they are; a process outside ensoul
 * that speaks only NATS and msgpack (docs/PROTOCOL.md, "Tool actors") serves a tool too.
 */
import { Packr, Unpackr } from "msgpackr";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { createGateChain, gatedOutlet, intercept } from "../../../actors/gate/index.ts";
import { createInProcessOutlet, createMemoryActorStore, createSoul, defineSoul, useActions, usePerceptions, useTool, type MentalProcess } from "../../../actors/soul/index.ts";
import { createToolRegistry, decodeToolReply, defineTool, encodeToolBody, remoteTool, serveToolActor, type ToolActorHandle, type ToolEvent } from "../../../actors/tool/index.ts";
import { clusterSubjects, connectNatsBus, type Bus } from "../../../runtime/bus/index.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { record, said } from "../../support/soul/helpers.ts";

const process: MentalProcess = async ({ workingMemory }) => {
  const { content } = usePerceptions().invokingPerception;
  const [name, ...rest] = content.split(" ");
  try {
    useActions().speak(`ok ${JSON.stringify(await useTool(name)(JSON.parse(rest.join(" "))))}`);
  } catch (err) {
    useActions().speak(`${(err as Error).name}: ${(err as Error).message}`);
  }
  return workingMemory;
};
const blueprint = defineSoul({ name: "Remote", persona: "calls remote tools", initialProcess: process, processes: { process } });

const served: string[] = [];
const add = (instance: string) =>
  defineTool({ name: "add", description: "adds", input: z.object({ a: z.number(), b: z.number() }), idempotent: true, run: ({ a, b }) => (served.push(instance), a + b) });
const hang = defineTool({ name: "hang", description: "never answers", input: z.object({}), timeoutMs: 5_000, run: () => new Promise<never>(() => {}) });

let seq = 0;
describeWithNats("tool actors on a real nats-server", () => {
  let server: NatsServerHandle;
  let toolNode: Bus;
  let soulNode: Bus;
  let cluster: string;
  const actors: ToolActorHandle[] = [];
  beforeAll(async () => {
    server = await startNatsServer({});
  });
  afterAll(async () => {
    await server?.dispose();
  });
  afterEach(async () => {
    await Promise.all(actors.splice(0).map((a) => a.stop()));
    await toolNode?.close();
    await soulNode?.close();
  });

  async function setUp() {
    cluster = `tool_${globalThis.process.pid}_${++seq}`;
    toolNode = await connectNatsBus({ servers: server.url, cluster, name: "tool-node", storage: "memory" });
    soulNode = await connectNatsBus({ servers: server.url, cluster, name: "soul-node", storage: "memory" });
    actors.push(serveToolActor(toolNode, cluster, add("one")), serveToolActor(toolNode, cluster, add("two")), serveToolActor(toolNode, cluster, hang));
    await Promise.all(actors.map((a) => a.ready()));
    const tools = createToolRegistry([
      remoteTool({ bus: soulNode, cluster, name: "add", idempotent: true }),
      remoteTool({ bus: soulNode, cluster, name: "hang", timeoutMs: 100 }),
      remoteTool({ bus: soulNode, cluster, name: "missing", timeoutMs: 500 }),
      remoteTool({ bus: soulNode, cluster, name: "outside" }),
    ]);
    const outlet = gatedOutlet(createInProcessOutlet(), createGateChain([{ name: "small", priority: 1, verify: (p) => (p.content.includes("1000") ? intercept("numbers that big are not allowed") : p) }]));
    const soul = createSoul({ blueprint, id: "s1", store: createMemoryActorStore("s1"), outlet, services: { tools } });
    return { soul, log: record(soul) };
  }

  async function turn(soul: Awaited<ReturnType<typeof setUp>>["soul"], content: string) {
    await soul.perceive(said(content));
    await soul.idle();
  }

  it("calls a remote tool through useTool and its gates; each call is answered once by one of the queue group", async () => {
    const { soul, log } = await setUp();
    served.length = 0;
    for (let i = 0; i < 6; i++) await turn(soul, `add {"a":${i},"b":2}`);
    await turn(soul, 'add {"a":1000,"b":2}');
    expect(log.said()).toEqual(["ok 2", "ok 3", "ok 4", "ok 5", "ok 6", "ok 7", "ToolRejectedError: call of tool add was rejected: small: numbers that big are not allowed"]);
    expect(served).toHaveLength(6);
    const calls = log.events.filter((e): e is Extract<ToolEvent, { type: "tool.call" }> => e.type === "tool.call");
    expect(calls.every((c) => c.remote)).toBe(true);
    await soul.stop();
  });

  it("reports input errors, timeouts and missing actors as what they are", async () => {
    const { soul, log } = await setUp();
    await turn(soul, 'add {"a":"x","b":2}');
    await turn(soul, "hang {}");
    await turn(soul, "missing {}");
    const [input, timeout, missing] = log.said();
    expect(input).toMatch(/^ToolInputError: invalid input for tool add: .*expected number/s);
    expect(timeout).toBe("ToolTimeoutError: tool hang did not answer within 100 ms");
    expect(missing).toMatch(/^ToolError: no tool actor serves missing \(no responders on ensoul\.tool_\d+_\d+\.tool\.missing\.call\)/);
    await soul.stop();
  });

  it("answers a malformed request with a malformed error and keeps serving", async () => {
    const { soul, log } = await setUp();
    const subject = clusterSubjects(cluster).toolCall("add");
    const garbage = decodeToolReply(await soulNode.request(subject, new Uint8Array([0xc1]), { timeoutMs: 2_000 }));
    expect(garbage).toMatchObject({ ok: true, reply: { ok: false, error: { kind: "malformed" } } });
    const wrongTool = encodeToolBody({ v: 1, callId: "x:1:tool:0", soulId: "x", tool: "hang", input: {}, timeoutMs: 1_000 });
    const misrouted = decodeToolReply(await soulNode.request(subject, wrongTool, { timeoutMs: 2_000 }));
    expect(misrouted).toMatchObject({ ok: true, reply: { ok: false, error: { kind: "malformed", message: "call names tool hang, this actor serves add" } } });
    expect(actors.reduce((n, a) => n + a.stats().malformed, 0)).toBe(2);
    await turn(soul, 'add {"a":1,"b":1}');
    expect(log.said()).toEqual(["ok 2"]);
    await soul.stop();
  });

  it("works with a tool served by a process outside ensoul that speaks only NATS and msgpack", async () => {
    const { soul, log } = await setUp();
    // The outside server: the subject and queue group from PROTOCOL.md, plain msgpack maps.
    const packr = new Packr({ useRecords: false });
    const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });
    const sub = toolNode.subscribe(
      clusterSubjects(cluster).toolCall("outside"),
      (msg) => {
        const req = unpackr.unpack(msg.data) as { v: number; callId: string; input: { q: string } };
        msg.respond(packr.pack({ v: 1, ok: true, value: { echoed: req.input.q, callId: req.callId } }));
      },
      { queue: "tool-outside" },
    );
    await sub.accepted();
    await turn(soul, 'outside {"q":"hi"}');
    expect(log.said()[0]).toMatch(/^ok \{"echoed":"hi","callId":"s1:tool:[A-Za-z0-9_-]{22}"\}$/);
    sub.unsubscribe();
    await soul.stop();
  });
});
