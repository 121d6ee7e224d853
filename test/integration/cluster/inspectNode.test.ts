/**
 * A node started with `inspect`: the souls it activates, its daimons, the skill gates it
 * serves and its bridges all report to one inspection, here in `ws` mode to a local WebSocket receiver that
 * parses the wire events as the Stately inspector would.
 */
import { afterAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { parseClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { createInspection } from "../../../runtime/inspect/inspection.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { until, watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { tempDirs } from "../../support/tempDirs.ts";

/** One inspection event as it arrives on the wire (the Stately inspector protocol). */
interface WireEvent {
  type: "@xstate.actor" | "@xstate.snapshot" | "@xstate.event";
  sessionId: string;
  name?: string;
  definition?: string;
  snapshot?: { value?: unknown; status?: string; context?: Record<string, unknown> };
  event?: { type: string; [field: string]: unknown };
}

const dirs = tempDirs("ensoul-inspect-node-");
afterAll(() => dirs.cleanup());

describe("a node with inspect", () => {
  it("streams the souls it activates, its daimons, its skill gates and its bridges to the inspection", async () => {
    const receiver = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => receiver.once("listening", resolve));
    const received: WireEvent[] = [];
    receiver.on("connection", (socket) => socket.on("message", (data) => received.push(JSON.parse(data.toString()) as WireEvent)));
    const url = `ws://127.0.0.1:${(receiver.address() as { port: number }).port}`;

    const inspection = createInspection({ mode: "ws", url });
    await inspection.ready();
    const config = parseClusterConfig({
      cluster: "inspected",
      souls: [
        { id: "echo", blueprint: echoSoul },
        { id: "quiet", blueprint: echoSoul },
      ],
      daimons: [{ soul: "echo", name: "Kothar", persona: "You are Kothar.", mode: "off" }],
      skillGates: [{ skill: "tone", gate: { builtin: "length", options: { maxChars: 100 } } }],
      bridges: [{ type: "http", soul: "echo", options: { port: 0 } }],
      runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
    });
    const node = await startNode({ config, data: dirs.make(), store: { noSync: true }, env: { ENSOUL_HTTP_TOKEN: "inspect-token" }, log: () => undefined, inspect: inspection.inspect });
    try {
      const says = watchEnvelopes(node.bus, node.subjects.says("echo"), "speech");
      const sent = await perceive(node.bus, "echo", "hello inspector");
      const final = await says.next((e) => e.body.final && e.causation === sent.id, 10_000, "echo's answer");
      expect(final.body.text).toBe("echo: hello inspector");
      says.stop();
    } finally {
      await node.stop();
    }
    await inspection.stop();

    const soulActor = () => received.find((e) => e.type === "@xstate.actor" && e.name === "echo");
    await until(
      () => received.some((e) => e.type === "@xstate.snapshot" && e.sessionId === soulActor()?.sessionId && e.snapshot?.value === "stopped"),
      5_000,
      "the soul's last snapshot at the receiver",
    );
    const session = soulActor()?.sessionId;
    expect(soulActor()?.definition).toContain('"id":"soul"');

    // The soul's session walks its process: idle, running the perception, idle again.
    const values = received.filter((e) => e.type === "@xstate.snapshot" && e.sessionId === session).map((e) => JSON.stringify(e.snapshot?.value));
    const running = values.indexOf(JSON.stringify({ echo: "running" }));
    expect(running).toBeGreaterThanOrEqual(0);
    expect(values.slice(running)).toContain(JSON.stringify({ echo: "idle" }));
    const perceived = received.find((e) => e.type === "@xstate.event" && e.sessionId === session && e.event?.type === "PERCEIVE");
    expect(perceived?.event?.["perception"]).toMatchObject({ content: "hello inspector" });

    // Only what the node activated: a soul that was never perceived is not started, so not shown.
    expect(received.some((e) => e.type === "@xstate.actor" && e.name === "quiet")).toBe(false);
    // The daimon and the skill gate run in systems of their own, reporting to the same inspection.
    const daimon = received.find((e) => e.type === "@xstate.actor" && e.name === "daimon-echo");
    expect(daimon?.definition).toContain('"id":"daimon"');
    const gate = received.find((e) => e.type === "@xstate.actor" && e.definition?.includes('"id":"skillGate"'));
    expect(gate).toBeDefined();
    expect(received.some((e) => e.type === "@xstate.snapshot" && e.sessionId === gate?.sessionId && e.snapshot?.value === "serving")).toBe(true);
    // So does each bridge's machine: connecting, online, then stopped with the node.
    const bridge = received.find((e) => e.type === "@xstate.actor" && e.name === "bridge-http-echo");
    expect(bridge?.definition).toContain('"id":"bridge"');
    const bridgeStates = received.filter((e) => e.type === "@xstate.snapshot" && e.sessionId === bridge?.sessionId).map((e) => e.snapshot?.value);
    expect(bridgeStates).toEqual(expect.arrayContaining(["online", "stopped"]));

    await until(() => receiver.clients.size === 0, 5_000, "the inspection's socket to close");
    await new Promise((resolve) => receiver.close(resolve));
  });
});
