/**
 * A node's liveness lease under renewal faults, on a real nats-server (the `lease.renew`
 * fault point): a renewal that fails or is slow now and then keeps the lease; one that lands
 * with its acknowledgement lost is the node's own, not a sign that another process took it;
 * renewals failing for longer than the lease lose it, and say why.
 */
import { expect, it } from "vitest";
import type { LeaseStore } from "../../../runtime/bus/index.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { historyFixture } from "../../support/failover/historyFixture.ts";
import { withFaults } from "../../support/faults/faultArbitraries.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";

const TTL_MS = 900;
const renewals = { point: "lease.renew", match: { lease: "node", nodeId: "a", op: "renew" } } as const;

describeWithNats("a node's lease under renewal faults", () => {
  const fixture = historyFixture("ensoul-lease-faults-");
  const leases = async (): Promise<LeaseStore> => (await fixture.bus(uniqueCluster("lease"))).leases!(TTL_MS);
  /** What `lost` says within `ms` (undefined: the lease still held). */
  const lostWithin = (lost: Promise<string>, ms: number) => Promise.race([lost, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms))]);

  it("keeps the lease through renewals that fail or are slow for less than its length", async () => {
    const store = await leases();
    await withFaults(
      [
        { ...renewals, nth: 2, times: 1, fault: { kind: "fail" } },
        { ...renewals, nth: 4, times: 1, fault: { kind: "delay", ms: 200 } },
      ],
      async (plan) => {
        const lease = await store.holdNode("a", "machine-a");
        expect(await lostWithin(lease.lost, 2 * TTL_MS)).toBeUndefined();
        expect(plan.injected("lease.renew")).toHaveLength(2);
        expect(await store.nodeAlive("a")).toBe(true);
        await lease.release();
      },
    );
  });

  it("a renewal that landed with its acknowledgement lost is the node's own: the lease is kept", async () => {
    const store = await leases();
    await withFaults([{ ...renewals, nth: 2, times: 1, fault: { kind: "ackLost" } }], async (plan) => {
      const lease = await store.holdNode("a", "machine-a");
      expect(await lostWithin(lease.lost, 2 * TTL_MS)).toBeUndefined();
      expect(plan.injected("lease.renew")).toHaveLength(1);
      expect(plan.count("lease.renew")).toBeGreaterThan(4); // it went on renewing
      await lease.release();
    });
  });

  it("renewals failing for longer than the lease lose it, and say why", async () => {
    const store = await leases();
    await withFaults([{ ...renewals, times: Infinity, fault: { kind: "fail" } }], async () => {
      const lease = await store.holdNode("a", "machine-a");
      expect(await lostWithin(lease.lost, 5 * TTL_MS)).toMatch(/node a could not renew its lease for 900 ms: it has lapsed/);
    });
  });
});
