/**
 * A node killed (SIGKILL, as by a power cut) at an exact boundary of the turn path, then
 * started again: the real `ensoul up` in a child process with a fault plan in ENSOUL_FAULTS
 * (runtime/faults), echo souls on a real nats-server, the answers as a bridge sees them. The
 * chaos crash loop kills at random moments; these kill right before the turn's LMDB commit,
 * right after it (nothing said, nothing acknowledged), and right after its speech was
 * published (its outbox entry not yet acknowledged). In each case, after the restart every
 * perception is answered exactly once and each soul's memory holds each perception once.
 * The three kills come one after the other in one run (a node start costs seconds).
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bus } from "../../../runtime/bus/index.ts";
import type { FaultRule } from "../../../runtime/faults/index.ts";
import { connectClusterBus } from "../../../runtime/node/index.ts";
import { pause, until } from "../../support/cluster/busWatch.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { AnswerLedger, bySoul, fleetSoulId, soulMemory, spawnFleetNode } from "../../support/chaos/fleet.ts";
import { sendPerceptions } from "../../support/faults/turnPathAudit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const SOULS = 2;
const PERCEPTIONS = 10;
/**
 * Each child dies at its plan's point (counted from its own start); the next one starts with
 * the next plan, the last with none. Ten perceptions leave each child work to reach its point.
 */
const CRASHES: { name: string; rule: FaultRule }[] = [
  // The perception comes back from the stream (unacked) and its turn runs again.
  { name: "before the second commit", rule: { point: "turn.commit", nth: 2, fault: { kind: "crash" } } },
  // Committed, nothing said or acked: its speech goes out from the outbox, its redelivery is a duplicate.
  { name: "after the second commit", rule: { point: "turn.commit", nth: 2, fault: { kind: "crash", after: true } } },
  // Published, its outbox entry not acknowledged: published again under its id, which the stream stores once.
  { name: "after the second publish", rule: { point: "outbox.publish", nth: 2, fault: { kind: "crash", after: true } } },
];

describeWithNats("a node killed at a boundary of the turn path, then restarted", () => {
  const dirs = tempDirs("ensoul-crash-boundary-");
  let server: NatsServerHandle;
  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
  });
  afterAll(async () => {
    await server?.dispose();
    dirs.cleanup();
  });

  it("killed before a commit, after a commit, after a publish, one after the other: every perception answered exactly once, each in memory once", async () => {
    const cluster = uniqueCluster("crash");
    const data = join(dirs.make(), "data");
    const fleet = { cluster, souls: SOULS, node: "a", nats: server.url, data };
    const bus: Bus = await connectClusterBus({ servers: server.url, cluster, reconnectTimeWaitMs: 100 });
    let node = spawnFleetNode({ ...fleet, env: { ENSOUL_FAULTS: JSON.stringify([CRASHES[0]!.rule]) } });
    try {
      await node.waitFor(/ensoul up: ready/, 60_000);
      const ledger = await AnswerLedger.watch(bus, "crash-ledger");
      const sent = await sendPerceptions(bus, [fleetSoulId(0), fleetSoulId(1)], PERCEPTIONS, "hello");
      const answeredBefore: number[] = [];
      for (const [i, crash] of CRASHES.entries()) {
        // The plan kills it at its point: the exit is the signal (cliProcess reports a signal as 128), so the fault fired.
        expect({ crash: crash.name, exit: await node.exited }).toEqual({ crash: crash.name, exit: 128 });
        answeredBefore.push(ledger.answers);
        const next = CRASHES[i + 1];
        node = spawnFleetNode(next ? { ...fleet, env: { ENSOUL_FAULTS: JSON.stringify([next.rule]) } } : fleet);
      }
      await until(() => sent.every((s) => ledger.answered(s.id)), 60_000, () => `answers to all ${sent.length} (have ${ledger.answers}; after each kill: ${answeredBefore.join(", ")}):\n${node.output()}`);
      await pause(1_000); // room for anything answered twice to show up
      const audit = ledger.audit(sent);
      expect(audit.missing).toEqual([]);
      expect(audit.duplicates).toEqual([]);
      expect(audit.wrong).toEqual([]);
      for (const [soul, ids] of bySoul(sent)) {
        const memory = await soulMemory(bus, "a", soul);
        expect({ soul, turns: memory.turns, inbox: memory.inbox, perceived: memory.perceived }).toEqual({ soul, turns: ids.length, inbox: { pending: 0, failed: 0 }, perceived: ids });
      }
    } finally {
      await bus.close();
      await node.kill("SIGKILL");
    }
  }, 180_000);
});
