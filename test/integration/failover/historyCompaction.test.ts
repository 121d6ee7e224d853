/**
 * Compaction of a soul's replicated history on a real nats-server: the owner writes a snapshot
 * every `snapshotEvery` records and removes the records before it, so the soul's subject stays
 * small while a rebuild elsewhere still has the whole soul; the snapshot carries the done
 * inbox ids, so a takeover's replay of missed perceptions answers nothing twice; and a stale
 * owner cannot remove what the new owner wrote.
 */
import { jetstreamManager, StorageType, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterSubjects, decodeEnvelope, historyStreamName, historySubject, isKind, type LeaseStore, type SoulHistoryLog } from "../../../runtime/bus/index.ts";
import { withFaults } from "../../support/faults/faultArbitraries.ts";
import { parseClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { openReplicatedSoul, type CompactionEvent, type OpenSoulOptions } from "../../../runtime/node/failover/index.ts";
import { recordMissedPerceptions } from "../../../runtime/node/failover/missedPerceptions.ts";
import type { Store } from "../../../runtime/store/index.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { historyFixture, largeState, until } from "../../support/failover/historyFixture.ts";
import { sampleOutbox, sampleState } from "../../support/store/fixtures.ts";

const EVERY = 5;

describeWithNats("compaction of a soul's replicated history", () => {
  const fixture = historyFixture("ensoul-compact-");
  const { dirs } = fixture;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const bus = (cluster: string) => fixture.bus(cluster);
  const store = () => fixture.store();
  /** How many records the soul's subject holds now (the stream's own count, per subject). */
  const recordsOf = async (cluster: string, soulId: string) => {
    const subject = historySubject(cluster, soulId);
    const info = await jsm.streams.info(historyStreamName(cluster), { subjects_filter: subject });
    return info.state.subjects?.[subject] ?? 0;
  };
  /** Compaction reports, and a wait for the n-th purge. */
  const reports = () => {
    const events: CompactionEvent[] = [];
    const compacted = (count: number) => until(async () => events.filter((e) => e.kind === "compacted").length >= count, 5_000);
    return { events, compacted, report: (e: CompactionEvent) => void events.push(e) };
  };
  const opener = (local: Store, soulId: string, log: SoulHistoryLog, leases: LeaseStore, nodeId: string, epoch: number, extra: Partial<OpenSoulOptions> = {}) =>
    openReplicatedSoul({ local: local.actor(soulId), log, leases, nodeId, epoch, onFenced: () => undefined, ...extra });

  /** A soul opened on node a (of a fresh cluster unless named), compacting every `every` records, with its reports. */
  const compactingOnA = async (soulId: string, { cluster = uniqueCluster("cmp"), every = EVERY } = {}) => {
    const b1 = await bus(cluster);
    const leases = b1.leases!(2_000);
    const nodeA = await leases.holdNode("a", "machine-a");
    const storeA = store();
    const r = reports();
    const a = await opener(storeA, soulId, b1.soulHistory!(), leases, "a", nodeA.epoch, { compaction: { every, report: r.report } });
    return { cluster, b1, leases, nodeA, storeA, r, a };
  };

  beforeAll(async () => {
    nc = await connect({ servers: fixture.server.url });
    jsm = await jetstreamManager(nc);
  });
  afterAll(async () => {
    await nc?.close();
  });

  it("keeps a soul's subject to about snapshotEvery records, and a rebuild from it has the whole soul", async () => {
    const { cluster, b1, leases, nodeA, storeA, r, a } = await compactingOnA("sam");
    for (let turn = 1; turn <= 23; turn++) {
      await storeA.actor("sam").receive(`p${turn}`, { content: `hello ${turn}` });
      // Working memory that grows every turn: the rebuilt soul must have all of it.
      await a.store.commitTurn({ state: sampleState(turn, turn * 2), inboxDone: `p${turn}`, outbox: [sampleOutbox(turn)], kv: [{ namespace: "userModel", key: ["ada", turn], value: { turn } }] });
      if (turn < 23) await a.store.ackOutbox(sampleOutbox(turn).id);
      // A purge runs beside the next commits: it may be a few records behind, never a whole round.
      expect(await recordsOf(cluster, "sam")).toBeLessThanOrEqual(2 * EVERY + 1);
    }
    // The seed, then 23 turns: a snapshot after every fifth record, each followed by a purge.
    await r.compacted(4);
    expect(r.events.filter((e) => e.kind === "failed")).toEqual([]);
    expect(await recordsOf(cluster, "sam")).toBeLessThanOrEqual(EVERY + 1);
    expect((await b1.soulHistory!().read("sam")).entries.length).toBe(await recordsOf(cluster, "sam"));
    await nodeA.release();

    const nodeB = await leases.holdNode("b", "machine-b");
    const storeB = store();
    const b = await opener(storeB, "sam", b1.soulHistory!(), leases, "b", nodeB.epoch);
    expect(b.restored).toBe("rebuilt");
    expect(b.applied).toBeLessThanOrEqual(EVERY);
    const [was, now] = [storeA.actor("sam"), storeB.actor("sam")];
    expect(now.loadState()).toEqual(was.loadState());
    expect(now.loadState()?.turn).toBe(23);
    expect((now.loadState()?.workingMemory as { memories: unknown[] }).memories).toHaveLength(46);
    expect(now.kvRange!("userModel", ["ada"])).toEqual(was.kvRange!("userModel", ["ada"]));
    // Speech acknowledged before the snapshots is not said again; the last turn's, never acknowledged, is.
    expect(now.pendingOutbox().map((e) => e.id)).toEqual([sampleOutbox(23).id]);
    // Perceptions processed long before the last snapshot are still known.
    for (const id of ["p1", "p7", "p22", "p23"]) expect(await now.receive(id, { content: "again" }), id).toBe(false);
    await nodeB.release();
  }, 20_000);

  it("perceptions answered just before a snapshot are not taken for missed ones by the node that takes the soul over", async () => {
    const { cluster, b1, leases, nodeA, storeA, r, a } = await compactingOnA("ivy");
    // Five perceptions on the cluster stream, each answered by a turn: the fifth turn's record
    // is the fifth after the seed, so a snapshot follows it and the turns go.
    const answered = [];
    for (let i = 1; i <= 5; i++) {
      const p = await perceive(b1, "ivy", `hello ${i}`);
      answered.push(p.id);
      await storeA.actor("ivy").receive(p.id, { content: `hello ${i}` });
      await a.store.commitTurn({ state: sampleState(i), inboxDone: p.id });
    }
    await r.compacted(1);
    const history = (await b1.soulHistory!().read("ivy")).entries;
    expect(history).toHaveLength(1); // the snapshot alone: every turn that answered them is gone
    // One more arrives and is never answered here: the node is lost before its turn.
    const unanswered = await perceive(b1, "ivy", "are you there?");
    await nodeA.release();

    const nodeB = await leases.holdNode("b", "machine-b");
    const storeB = store();
    const b = await opener(storeB, "ivy", b1.soulHistory!(), leases, "b", nodeB.epoch);
    expect(b.restored).toBe("rebuilt");
    const sinceMs = (b.previous?.at ?? Date.now()) - 120_000;
    const missed = await recordMissedPerceptions({ log: b1.soulHistory!(), subjects: clusterSubjects(cluster), store: b.store, soulId: "ivy", sinceMs });
    expect(missed).toBe(1);
    expect(storeB.actor("ivy").pendingInbox().map((e) => e.id)).toEqual([unanswered.id]);
    for (const id of answered) expect(storeB.actor("ivy").inboxEntry(id)?.status, id).toBe("done");
    await nodeB.release();
  }, 20_000);

  it("a compaction replaces the records before its snapshot in one fenced step: a stale owner's, held until another node claimed the soul, removes nothing", async () => {
    const cluster = uniqueCluster("cmp");
    const [busA, busB] = [await bus(cluster), await bus(cluster)];
    const leaseBusA = await bus(cluster);
    const leasesA = leaseBusA.leases!(1_000);
    const leasesB = busB.leases!(1_000);
    const nodeA = await leasesA.holdNode("a", "machine-a");
    const fenced: string[] = [];
    const r = reports();
    const storeA = store();
    const a = await opener(storeA, "kit", busA.soulHistory!(), leasesA, "a", nodeA.epoch, { compaction: { every: EVERY, report: r.report }, onFenced: (id) => fenced.push(id) });
    const storeB = store();
    const nodeB = await withFaults([{ point: "history.purge", match: { soulId: "kit" }, fault: { kind: "hold" } }], async (plan) => {
      for (let turn = 1; turn <= EVERY; turn++) await a.store.commitTurn({ state: sampleState(turn) });
      // The fifth record reached the count: a's compaction starts, and waits (a paused process).
      const compaction = await plan.reached("history.purge");
      expect(await recordsOf(cluster, "kit")).toBe(1 + EVERY); // the seed, five turns

      await leaseBusA.close();
      await until(async () => !(await leasesB.nodeAlive("a")), 10_000);
      const node = await leasesB.holdNode("b", "machine-b");
      const b = await opener(storeB, "kit", busB.soulHistory!(), leasesB, "b", node.epoch);
      for (let turn = EVERY + 1; turn <= EVERY + 3; turn++) await b.store.commitTurn({ state: sampleState(turn) });
      // a wakes up: its compaction is fenced, so nothing is written and nothing removed.
      compaction.release();
      await a.store.settled();
      return node;
    });
    expect(fenced).toEqual(["kit"]);
    expect(r.events.map((e) => e.kind)).toEqual(["failed"]);
    expect(await recordsOf(cluster, "kit")).toBe(1 + EVERY + 1 + 3); // the seed, a's five turns, b's claim, b's three turns
    await nodeB.release();

    const nodeC = await leasesB.holdNode("c", "machine-c");
    const storeC = store();
    const c = await opener(storeC, "kit", busB.soulHistory!(), leasesB, "c", nodeC.epoch);
    expect(c.restored).toBe("rebuilt");
    expect(storeC.actor("kit").loadState()).toEqual(storeB.actor("kit").loadState());
    expect(storeC.actor("kit").loadState()?.turn).toBe(EVERY + 3);
    await nodeC.release();
  }, 20_000);

  it("a history stream made before compaction used rollups (no allow_rollup_hdrs) is brought to allow them, and compacts", async () => {
    const cluster = uniqueCluster("cmp");
    // As nodes of the previous version made it.
    await jsm.streams.add({ name: historyStreamName(cluster), subjects: [`ensoul.${cluster}.history.*`], storage: StorageType.File, max_msg_size: 8 * 1024 * 1024 });
    const { r, a } = await compactingOnA("old", { cluster });
    for (let turn = 1; turn <= EVERY; turn++) await a.store.commitTurn({ state: sampleState(turn) });
    await r.compacted(1);
    expect(r.events.filter((e) => e.kind === "failed")).toEqual([]);
    expect(await recordsOf(cluster, "old")).toBe(1);
    expect((await jsm.streams.info(historyStreamName(cluster))).config.allow_rollup_hdrs).toBe(true);
  }, 20_000);

  it("a snapshot too large for one message does not compact (a rollup in parts would leave no whole record while they land): the records stay, it is reported, a revert's is written plain, a rebuild has all", async () => {
    const { cluster, leases, nodeA, storeA, r, a } = await compactingOnA("big", { every: 2 });
    for (let turn = 1; turn <= 4; turn++) await a.store.commitTurn({ state: largeState(turn) });
    await a.store.settled();
    const failures = r.events.filter((e) => e.kind === "failed");
    expect(failures).toHaveLength(2);
    expect(String((failures[0] as { error: unknown }).error)).toMatch(/does not fit in one message/);
    expect((await bus(cluster).then((b) => b.soulHistory!().read("big"))).entries).toHaveLength(1 + 4); // the seed, four turns
    // A revert's snapshot that large must reach the history all the same: written in parts, the records before it kept.
    await a.store.snapshot();
    expect((await bus(cluster).then((b) => b.soulHistory!().read("big"))).entries).toHaveLength(1 + 4 + 1);
    await nodeA.release();

    const nodeB = await leases.holdNode("b", "machine-b");
    const storeB = store();
    const b = await opener(storeB, "big", (await bus(cluster)).soulHistory!(), leases, "b", nodeB.epoch);
    expect(b.restored).toBe("rebuilt");
    expect(storeB.actor("big").loadState()).toEqual(storeA.actor("big").loadState());
    await nodeB.release();
  }, 40_000);

  it("nodes compact as the config says; the node that takes the soul over answers only what was never answered", async () => {
    const cluster = uniqueCluster("cmp");
    const config = parseClusterConfig({ cluster, placement: "auto", souls: [{ id: "sam", blueprint: "samantha" }], runtime: { heartbeatMs: 200, failover: { leaseMs: 900, snapshotEvery: 3 } } });
    const watcher = await bus(cluster);
    const answers: string[] = [];
    await watcher.durable(clusterSubjects(cluster).allSouls("says"), "watch", (m) => {
      const d = decodeEnvelope(m.data);
      if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final && d.envelope.causation) answers.push(d.envelope.causation);
    });
    const lines: string[] = [];
    const start = (name: string) => startNode({ config, nodeId: name, nats: { servers: fixture.server.url }, data: dirs.make(), store: { noSync: true }, log: (l) => lines.push(`[${name}] ${l}`) });
    const a = await start("a");
    const sent: string[] = [];
    for (let i = 1; i <= 7; i++) {
      const p = await perceive(watcher, "sam", `Message ${i}, from Ada.`, { name: "Ada" });
      sent.push(p.id);
      await until(async () => answers.includes(p.id), 10_000);
    }
    await a.idle();
    await until(async () => (await recordsOf(cluster, "sam")) <= 3 + 2, 5_000);
    await a.stop();
    // Sent while no node runs the soul: the next node finds it in the stream and answers it.
    const waiting = await perceive(watcher, "sam", "Still there?", { name: "Ada" });
    const b = await start("b");
    try {
      await until(async () => answers.includes(waiting.id), 10_000);
      await b.idle();
      expect(lines.join("\n")).toMatch(/\[b\] .*soul sam rebuilt from its replicated history/);
      expect(lines.join("\n")).toMatch(/\[b\] .*soul sam had 1 perception waiting/);
      expect(b.memory("sam").turns).toBe(8);
      await new Promise((r) => setTimeout(r, 300));
      for (const id of [...sent, waiting.id]) expect(answers.filter((c) => c === id), id).toHaveLength(1);
    } finally {
      await b.stop();
    }
  }, 30_000);
});
