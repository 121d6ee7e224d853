/**
 * A node stopping while one of its souls' turn records waits for NATS (issue 23: no single
 * fault keeps a node from stopping). The perception consumer's stop waits for the turn under
 * way, and the turn waited for its record for as long as NATS was away: the stop now ends that
 * wait first. The turn fails unsaid; the next start on the same data directory takes the
 * history's word for the soul (the record never landed: the copy is rebuilt without it) and
 * answers the perception, never acknowledged, once.
 */
import { expect, it } from "vitest";
import { clusterSubjects, decodeEnvelope, isKind } from "../../../runtime/bus/index.ts";
import { parseClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { historyFixture, until } from "../../support/failover/historyFixture.ts";
import { withFaults } from "../../support/faults/faultArbitraries.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";

describeWithNats("a node stopping while a soul's record waits for NATS", () => {
  const fixture = historyFixture("ensoul-stop-outage-");

  it("stops within seconds, the turn unsaid; the next start rebuilds the soul from its history and answers the perception once", async () => {
    const cluster = uniqueCluster("stop");
    const config = parseClusterConfig({ cluster, nodes: ["a"], souls: [{ id: "sam", blueprint: "samantha" }], runtime: { heartbeatMs: 200, failover: { leaseMs: 1_000 } } });
    const data = fixture.dirs.make();
    const lines: string[] = [];
    const start = () => startNode({ config, nodeId: "a", nats: { servers: fixture.server.url }, data, store: { noSync: true }, log: (l) => lines.push(l) });
    const watcher = await fixture.bus(cluster);
    const answers: string[] = [];
    await watcher.durable(clusterSubjects(cluster).allSouls("says"), "watch", (m) => {
      const d = decodeEnvelope(m.data);
      if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final && d.envelope.causation) answers.push(d.envelope.causation);
    });
    const node = await start();
    const { perception, stopMs } = await withFaults([{ point: "history.append", match: { soulId: "sam", kind: "turn" }, fault: { kind: "hold" } }], async (plan) => {
      const p = await perceive(watcher, "sam", "Hello, are you there?", { name: "Ada" });
      // The turn is committed locally; its record goes out into an outage.
      const append = await plan.reached("history.append");
      await fixture.server.stop();
      await new Promise((r) => setTimeout(r, 500)); // the node has seen the connection go
      append.release();
      const stopping = Date.now();
      await node.stop().catch(() => undefined); // steps that need NATS fail, and say so
      return { perception: p, stopMs: Date.now() - stopping };
    });
    // Before, it waited for the record as long as NATS was away (a minute at least).
    expect(stopMs).toBeLessThan(20_000);

    await fixture.server.restart();
    const again = await start();
    try {
      await until(async () => answers.includes(perception.id), 15_000);
      await again.idle();
      expect(lines.join("\n")).toMatch(/soul sam rebuilt from its replicated history \(0 turns\)/);
      await new Promise((r) => setTimeout(r, 300));
      expect(answers.filter((id) => id === perception.id)).toHaveLength(1);
      expect(again.memory("sam").turns).toBe(1);
    } finally {
      await again.stop();
    }
  }, 60_000);
});
