/**
 * A soul's history and its local copy under append faults, on a real nats-server (issue 23,
 * item 3): an append that lands with its acknowledgement lost, fails before it lands, is slow,
 * or meets NATS gone for a while. Whatever happens, a turn's commit resolves only once its
 * record is in the history, the next turn is the next record, and a rebuild from the history
 * alone (another node, another data directory) is the local copy. The log never takes a record
 * sent under an id already used for another one for that one.
 */
import fc from "fast-check";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, nanos } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { historyStreamName, HistoryDuplicateError, type Bus, type NodeLease } from "../../../runtime/bus/index.ts";
import { decodeRecord, openReplicatedSoul, type OpenedSoul } from "../../../runtime/node/failover/index.ts";
import type { LmdbActorStore } from "../../../runtime/store/index.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { historyFixture } from "../../support/failover/historyFixture.ts";
import { faultSchedule, withFaults } from "../../support/faults/faultArbitraries.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { sampleOutbox, sampleState } from "../../support/store/fixtures.ts";

type Fixture = ReturnType<typeof historyFixture>;

/** A soul opened on node a of a fresh cluster, compacting its history every `every` records (0: never). */
async function soulOnA(fixture: Fixture, soulId: string, every = 0) {
  const cluster = uniqueCluster("faf");
  const bus = await fixture.bus(cluster);
  const leases = bus.leases!(5_000);
  const nodeA = await leases.holdNode("a", "machine-a");
  const local = fixture.store().actor(soulId);
  const a = await openReplicatedSoul({ local, log: bus.soulHistory!(), leases, nodeId: "a", epoch: nodeA.epoch, onFenced: () => undefined, compaction: { every } });
  return { cluster, bus, nodeA, local, a };
}

/** One turn answering perception `p<i>`, its speech then acknowledged (published). */
async function turn(a: OpenedSoul, local: LmdbActorStore, i: number): Promise<void> {
  await local.receive(`p${i}`, { content: `hello ${i}` });
  await a.store.commitTurn({ state: sampleState(i), inboxDone: `p${i}`, outbox: [sampleOutbox(i)], kv: [{ namespace: "userModel", key: ["ada", i], value: { i } }] });
  await a.store.ackOutbox(sampleOutbox(i).id);
}

/** The soul as node b rebuilds it from the history alone, once node a has let its lease go. */
async function rebuiltOnB(fixture: Fixture, cluster: string, soulId: string, nodeA: NodeLease): Promise<LmdbActorStore> {
  await nodeA.release();
  const bus = await fixture.bus(cluster);
  const leases = bus.leases!(5_000);
  const nodeB = await leases.holdNode("b", "machine-b");
  const local = fixture.store().actor(soulId);
  await openReplicatedSoul({ local, log: bus.soulHistory!(), leases, nodeId: "b", epoch: nodeB.epoch, onFenced: () => undefined });
  await nodeB.release();
  return local;
}

/** What a rebuild must have of the local copy after `turns` turns. */
function expectSameSoul(rebuilt: LmdbActorStore, local: LmdbActorStore, turns: number): void {
  expect(rebuilt.loadState()).toEqual(local.loadState());
  expect(rebuilt.kvRange!("userModel", ["ada"])).toEqual(local.kvRange!("userModel", ["ada"]));
  expect(rebuilt.kvRange!("userModel", ["ada"])).toHaveLength(turns);
  for (let i = 1; i <= turns; i++) expect(rebuilt.inboxEntry(`p${i}`)?.status, `p${i}`).toBe("done");
}

/** The record numbers of the soul's history, in order, and their kinds. */
async function recordsOf(bus: Bus, soulId: string): Promise<{ n: number; kind: string }[]> {
  const { entries } = await bus.soulHistory!().read(soulId);
  return entries.map((e) => decodeRecord(soulId, e.data)).map((r) => ({ n: r.n, kind: r.kind }));
}

/** Numbers that go up by one from the first: no record lost, none twice. */
function expectContiguous(records: { n: number }[]): void {
  const ns = records.map((r) => r.n);
  expect(ns).toEqual(ns.map((_, i) => ns[0]! + i));
}

describeWithNats("a soul's history under append faults", () => {
  const fixture = historyFixture("ensoul-append-faults-");

  it("refuses an append acknowledged as a duplicate of a different record, and stores nothing", async () => {
    const log = (await fixture.bus(uniqueCluster("faf"))).soulHistory!();
    const first = await log.append("x", new Uint8Array([1]), 0, { msgId: "x:a:1:1" });
    // The same id, other bytes: JetStream's duplicate window answers with the first's sequence.
    const error = await log.append("x", new Uint8Array([2]), 0, { msgId: "x:a:1:1" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HistoryDuplicateError);
    expect((error as Error).message).toMatch(/different one/);
    expect((await log.read("x")).entries.map((e) => [e.seq, [...e.data]])).toEqual([[first, [1]]]);
  });

  it("recognises an append sent again after the duplicate window as the one that landed, not as fenced", async () => {
    const cluster = uniqueCluster("faf");
    const log = (await fixture.bus(cluster)).soulHistory!();
    await log.read("y"); // creates the stream
    const nc = await connect({ servers: fixture.server.url });
    try {
      await (await jetstreamManager(nc)).streams.update(historyStreamName(cluster), { duplicate_window: nanos(100) });
    } finally {
      await nc.close();
    }
    const first = await log.append("y", new Uint8Array([1]), 0, { msgId: "y:a:1:1" });
    await new Promise((r) => setTimeout(r, 400)); // past the window: the server no longer knows the id
    expect(await log.append("y", new Uint8Array([1]), 0, { msgId: "y:a:1:1" })).toBe(first);
    expect((await log.read("y")).entries).toHaveLength(1);
  });

  it("a turn whose record landed but whose acknowledgement was lost commits once, and the next turn is the next record", async () => {
    const { cluster, bus, nodeA, local, a } = await soulOnA(fixture, "sam");
    await turn(a, local, 1);
    await withFaults([{ point: "history.append", match: { soulId: "sam", kind: "turn" }, fault: { kind: "ackLost" } }], async (plan) => {
      await turn(a, local, 2);
      expect(plan.injected("history.append")).toHaveLength(1);
    });
    await turn(a, local, 3);
    const records = await recordsOf(bus, "sam");
    expect(records.filter((r) => r.kind === "turn")).toHaveLength(3);
    expectContiguous(records);
    expectSameSoul(await rebuiltOnB(fixture, cluster, "sam", nodeA), local, 3);
  }, 20_000);

  it("fault schedules over the appends of a run of turns (fail, ackLost, delay): every turn commits, and the history rebuilds the local copy", async () => {
    await fc.assert(
      fc.asyncProperty(faultSchedule({ points: ["history.append", "history.purge"], maxNth: 8 }), async (rules) => {
        const { cluster, bus, nodeA, local, a } = await soulOnA(fixture, "ivy", 3);
        const committed = await withFaults(rules, async () => {
          let ok = 0;
          for (let i = 1; i <= 5; i++) await turn(a, local, i).then(() => (ok += 1));
          await a.store.settled();
          return ok;
        });
        expect(committed).toBe(5);
        expectContiguous(await recordsOf(bus, "ivy"));
        expectSameSoul(await rebuiltOnB(fixture, cluster, "ivy", nodeA), local, 5);
      }),
      { numRuns: 8 },
    );
  }, 90_000);
});

describeWithNats("a soul's history while NATS is away", () => {
  const fixture = historyFixture("ensoul-append-outage-");

  it("a turn whose acknowledgement was lost just before NATS went away waits, lands once NATS is back, and the next turn is the next record", async () => {
    const { cluster, bus, nodeA, local, a } = await soulOnA(fixture, "kit");
    await turn(a, local, 1);
    const rules = [
      { point: "history.append", match: { soulId: "kit", kind: "turn" }, nth: 1, fault: { kind: "ackLost" } },
      { point: "history.append", match: { soulId: "kit", kind: "turn" }, nth: 2, fault: { kind: "hold" } },
    ] as const;
    const waitedThroughTheOutage = await withFaults([...rules], async (plan) => {
      const second = turn(a, local, 2);
      let settled = false;
      const done = second.then(
        () => (settled = true),
        () => (settled = true),
      );
      // Its record landed, its acknowledgement was lost; it is sent again, into an outage.
      const retry = await plan.reached("history.append");
      await fixture.server.stop();
      await new Promise((r) => setTimeout(r, 500)); // the client has seen the connection go
      retry.release();
      await new Promise((r) => setTimeout(r, 2_500));
      const waited = !settled;
      await fixture.server.restart();
      await done;
      return waited;
    });
    await turn(a, local, 3);
    const records = await recordsOf(bus, "kit");
    expect(records.filter((r) => r.kind === "turn")).toHaveLength(3);
    expectContiguous(records);
    expectSameSoul(await rebuiltOnB(fixture, cluster, "kit", nodeA), local, 3);
    // The turn did not fail while NATS was away: it waited for its record, its speech unsaid.
    expect(waitedThroughTheOutage).toBe(true);
  }, 40_000);
});
