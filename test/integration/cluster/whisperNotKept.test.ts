/**
 * A whisper the soul could not store (its commit failed: here the LMDB map is full) is not
 * counted as kept: the node dead-letters it with the reason, so nothing vanishes silently.
 */
import { afterAll, describe, expect, it } from "vitest";
import { clusterSubjects } from "../../../runtime/bus/index.ts";
import { parseClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { until, watchDead, watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { mindfulSoul } from "../../support/cluster/blueprints.ts";
import { perceive, whisper } from "../../support/cluster/clusterKit.ts";
import { fillMap } from "../../support/store/fillMap.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

describe("a whisper whose commit fails", () => {
  it("is dead-lettered with the store's error and not counted as kept", async () => {
    const config = parseClusterConfig({ cluster: "full", souls: [{ id: "mindful", blueprint: mindfulSoul }], runtime: { heartbeatMs: 100, passivateAfterMs: 0 } });
    const node = await startNode({ config, data: dirs.make(), store: { noSync: true, mapSize: 1024 * 1024 }, log: () => undefined });
    const s = clusterSubjects("full");
    try {
      // The soul is live (activated by a turn) before the map fills up.
      const says = watchEnvelopes(node.bus, s.says("mindful"), "speech");
      const hello = await perceive(node.bus, "mindful", "hello");
      await says.next((e) => e.body.final && e.causation === hello.id, 5_000, "the answer to hello");
      await node.idle();
      await fillMap(node.store);

      const dead = watchDead(node.bus, s.dead);
      await whisper(node.bus, "mindful", "they need reassurance");
      const letter = await dead.next((d) => d.subject === s.whisper("mindful"), 5_000, "the whisper's dead letter");
      expect(letter.reason).toMatch(/^whisper not kept: LMDB map is full/);
      // The registry takes the node's counters at its next heartbeat.
      const counters = () => node.registry.getSnapshot().context.counters;
      await until(() => counters().dead === 1, 5_000, "the dead letter to be counted");
      expect(counters().whispers).toBe(0);
      says.stop();
      dead.stop();
    } finally {
      await node.stop();
    }
  });
});
