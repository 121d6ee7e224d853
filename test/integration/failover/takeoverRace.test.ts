/**
 * A takeover that races the soul's previous owner, on a real nats-server (issue 23, item 4):
 * the old owner (a paused process whose lease lapsed) lands one more append between the new
 * node's read of the history and its claim. The claim is fenced; the new node reads again,
 * brings its copy up to the record it missed and claims after it. It never stops itself over a
 * soul's opening; the old owner is fenced off at its next append. A history ending in a record
 * its writer never finished does not fence every claim either.
 */
import { expect, it } from "vitest";
import type { Bus } from "../../../runtime/bus/index.ts";
import { openReplicatedSoul, SoulFencedError, startNodeFailover, type OpenedSoul } from "../../../runtime/node/failover/index.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { historyFixture, until } from "../../support/failover/historyFixture.ts";
import { withFaults } from "../../support/faults/faultArbitraries.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { sampleState } from "../../support/store/fixtures.ts";

const LEASE_MS = 1_000;

describeWithNats("a takeover racing the soul's previous owner", () => {
  const fixture = historyFixture("ensoul-takeover-");

  /**
   * Node a owns `soulId` and has committed one turn; its lease then lapses (its lease
   * connection closed: a paused process), while its history connection still works.
   */
  const ownedByAStale = async (soulId: string) => {
    const cluster = uniqueCluster("race");
    const [busA, leaseBusA] = [await fixture.bus(cluster), await fixture.bus(cluster)];
    const leasesA = leaseBusA.leases!(LEASE_MS);
    const nodeA = await leasesA.holdNode("a", "machine-a");
    const storeA = fixture.store();
    const a = await openReplicatedSoul({ local: storeA.actor(soulId), log: busA.soulHistory!(), leases: leasesA, nodeId: "a", epoch: nodeA.epoch, onFenced: () => undefined });
    await a.store.commitTurn({ state: sampleState(1) });
    await leaseBusA.close();
    const busB = await fixture.bus(cluster);
    const leasesB = busB.leases!(LEASE_MS);
    await until(async () => !(await leasesB.nodeAlive("a")), 10_000);
    return { busA, busB, a, storeA };
  };

  /** Node b's failover, and whether it has given up its souls (it would stop). */
  const nodeB = async (busB: Bus) => {
    const lines: string[] = [];
    const storeB = fixture.store();
    const failover = await startNodeFailover({ bus: busB, store: storeB, nodeId: "b", leaseMs: LEASE_MS, log: (line) => lines.push(line) });
    let lost: string | undefined;
    void failover.lost.then((why) => (lost = why));
    return { failover, storeB, lines, lost: () => lost };
  };

  it("a fenced claim reads the history again and claims after the record it missed: the node taking over does not stop", async () => {
    const { busB, a, storeA } = await ownedByAStale("sam");
    const b = await nodeB(busB);
    await withFaults([{ point: "history.claim", match: { soulId: "sam" }, fault: { kind: "hold" } }], async (plan) => {
      const opening = b.failover.prepare("sam");
      // b has read the history and holds its claim: the old owner lands one more turn now.
      const claim = await plan.reached("history.claim");
      await a.store.commitTurn({ state: sampleState(2) });
      claim.release();
      await opening;
      expect(plan.count("history.claim")).toBe(2);
    });
    expect(b.lost()).toBeUndefined();
    // b's copy has the turn it raced with; the old owner is fenced at its next append.
    expect(b.storeB.actor("sam").loadState()).toEqual(storeA.actor("sam").loadState());
    expect(b.storeB.actor("sam").loadState()?.turn).toBe(2);
    await expect(a.store.commitTurn({ state: sampleState(3) })).rejects.toBeInstanceOf(SoulFencedError);
    await b.failover.storeOf("sam").commitTurn({ state: sampleState(3) });
    await new Promise((r) => setTimeout(r, 200));
    expect(b.lost()).toBeUndefined();
    await b.failover.release();
  }, 30_000);

  it("a history that ends in a record its writer never finished (a part missing) is claimed after it, not fenced for ever", async () => {
    const { busA, busB, a, storeA } = await ownedByAStale("kit");
    // The old owner starts a record in parts (over the server's max_payload) and dies after its first part.
    const big = new Uint8Array(2.5 * 1024 * 1024).fill(7);
    const position = (a as OpenedSoul).store.position;
    await withFaults([{ point: "history.append", match: { soulId: "kit", part: 2 }, fault: { kind: "fail" } }], async () => {
      await expect(busA.soulHistory!().append("kit", big, position.lastSeq, { msgId: "kit:a:1:99", kind: "turn", n: position.n + 1 })).rejects.toThrow(/injected fault/);
    });
    const b = await nodeB(busB);
    await b.failover.prepare("kit");
    expect(b.lost()).toBeUndefined();
    expect(b.storeB.actor("kit").loadState()).toEqual(storeA.actor("kit").loadState());
    await b.failover.storeOf("kit").commitTurn({ state: sampleState(2) });
    expect(b.storeB.actor("kit").loadState()?.turn).toBe(2);
    await b.failover.release();
  }, 30_000);
});
