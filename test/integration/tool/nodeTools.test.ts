/**
 * Tools from the cluster config on two nodes over a real nats-server: a tool placed on node b
 * is served there as a tool actor and called by a soul on node a; a tool without a node runs in
 * the soul's own node; the calls and results reach the soul's events subject as `soul.tool.*`.
 */
import { expect, it } from "vitest";
import { z } from "zod";
import { defineSoul, useActions, useTool, type MentalProcess } from "../../../actors/soul/index.ts";
import { defineTool } from "../../../actors/tool/index.ts";
import { clusterSubjects } from "../../../runtime/bus/index.ts";
import { parseClusterConfig } from "../../../runtime/node/index.ts";
import { watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { natsNodes } from "../../support/cluster/natsNodes.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";

const ranOn: string[] = [];
const where = defineTool({ name: "where", description: "which process runs it", input: z.object({}), idempotent: true, run: () => (ranOn.push("b"), "served on b") });
const upper = defineTool({ name: "upper", description: "upper-cases", input: z.object({ text: z.string() }), run: ({ text }) => text.toUpperCase() });

const asking: MentalProcess = async ({ workingMemory }) => {
  const place = await useTool<object, string>("where")({});
  const loud = await useTool<{ text: string }, string>("upper")({ text: "hi" });
  useActions().speak(`${place} / ${loud}`);
  return workingMemory;
};
const asker = defineSoul({ name: "Asker", persona: "Asks tools.", initialProcess: asking, processes: { asking } });

describeWithNats("tools from the cluster config on two nodes", () => {
  const fixture = natsNodes();

  it("serves a tool placed on node b to a soul on node a, and runs an unplaced tool in the soul's node", { timeout: 30_000 }, async () => {
    const cluster = uniqueCluster("tools");
    const config = parseClusterConfig({
      cluster,
      nodes: ["a", "b"],
      souls: [{ id: "asker", blueprint: asker, node: "a" }],
      tools: [{ tool: where, node: "b" }, { tool: upper }],
      runtime: { heartbeatMs: 200, ackWaitMs: 5_000 },
    });
    for (const nodeId of ["b", "a"]) await fixture.startNode({ config, nodeId });
    const bus = await fixture.client(cluster);
    const subjects = clusterSubjects(cluster);
    const says = watchEnvelopes(bus, subjects.says("asker"), "speech");
    const events = watchEnvelopes(bus, subjects.events("asker"), "event");
    const p = await perceive(bus, "asker", "go");
    const speech = await says.next((e) => e.body.final && e.causation === p.id, 20_000, "the answer");
    expect(speech.body.text).toBe("served on b / HI");
    expect(ranOn).toEqual(["b"]);
    const call = await events.next((e) => (e.body as { type: string }).type === "soul.tool.call" && (e.body as { data: { tool: string } }).data.tool === "where", 5_000, "the where call event");
    expect((call.body as { data: { remote: boolean } }).data.remote).toBe(true);
    await events.next((e) => (e.body as { type: string; data: { tool: string; outcome?: string } }).type === "soul.tool.result" && (e.body as { data: { tool: string } }).data.tool === "upper", 5_000, "the upper result event");
  });
});
