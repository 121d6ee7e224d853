/**
 * The failover layer on a real nats-server (JetStream): a soul's turns replicated to its
 * history, the soul rebuilt exactly on another machine (another data directory, another node)
 * once the first node's lease is gone, leases that hold while their node lives, and a stale
 * owner fenced: after another node claimed the soul, its next commit fails and nothing of it
 * reaches the history.
 */
import { expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, nanos } from "@nats-io/transport-node";
import { HistoryFencedError, LeaseHeldError, nodeLeaseBucket } from "../../../runtime/bus/index.ts";
import { decodeRecord, openReplicatedSoul, SoulFencedError } from "../../../runtime/node/failover/index.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { historyFixture, largeState, until } from "../../support/failover/historyFixture.ts";
import { sampleOutbox, sampleState } from "../../support/store/fixtures.ts";

describeWithNats("a soul's replicated history and leases", () => {
  const fixture = historyFixture("ensoul-failover-");
  const bus = (cluster: string) => fixture.bus(cluster);
  const store = () => fixture.store();
  /**
   * A soul opened on node a of a fresh cluster, its history as node b reads it, and its move:
   * `takeOver` plays a's machine gone (its lease lapses) and opens the soul on node b.
   */
  const onNodeA = async (soulId: string) => {
    const cluster = uniqueCluster("fo");
    const [busA, busB, leaseBusA] = [await bus(cluster), await bus(cluster), await bus(cluster)];
    const [leasesA, leasesB] = [leaseBusA.leases!(1_000), busB.leases!(1_000)];
    const nodeA = await leasesA.holdNode("a", "machine-a");
    const storeA = store();
    const a = await openReplicatedSoul({ local: storeA.actor(soulId), log: busA.soulHistory!(), leases: leasesA, nodeId: "a", epoch: nodeA.epoch, onFenced: () => undefined });
    const log = busB.soulHistory!();
    const takeOver = async () => {
      await leaseBusA.close();
      await until(async () => !(await leasesB.nodeAlive("a")), 10_000);
      const nodeB = await leasesB.holdNode("b", "machine-b");
      const storeB = store();
      const b = await openReplicatedSoul({ local: storeB.actor(soulId), log, leases: leasesB, nodeId: "b", epoch: nodeB.epoch, onFenced: () => undefined });
      return { b, storeB, nodeB };
    };
    return { a, storeA, log, takeOver };
  };

  it("rebuilds a soul on another machine exactly as committed, and fences the node that owned it", async () => {
    const cluster = uniqueCluster("fo");
    const [busA, busB] = [await bus(cluster), await bus(cluster)];
    // a's leases on a connection of their own, closed below to play a paused (or dead) process.
    const leaseBusA = await bus(cluster);
    const leasesA = leaseBusA.leases!(1_000);
    const leasesB = busB.leases!(1_000);
    const nodeA = await leasesA.holdNode("a", "machine-a");
    const fencedA: string[] = [];
    const storeA = store();
    const a = await openReplicatedSoul({ local: storeA.actor("sam"), log: busA.soulHistory!(), leases: leasesA, nodeId: "a", epoch: nodeA.epoch, onFenced: (id) => fencedA.push(id) });
    expect(a.restored).toBe("seeded");
    for (let turn = 1; turn <= 3; turn++) {
      await storeA.actor("sam").receive(`p${turn}`, { content: `hello ${turn}` });
      await a.store.commitTurn({ state: sampleState(turn), inboxDone: `p${turn}`, outbox: [sampleOutbox(turn)], kv: [{ namespace: "userModel", key: ["ada", turn], value: { turn } }] });
      if (turn < 3) await a.store.ackOutbox(sampleOutbox(turn).id);
    }

    // Node a's lease is live: b may not take the soul.
    const nodeB = await leasesB.holdNode("b", "machine-b");
    const storeB = store();
    const open = () => openReplicatedSoul({ local: storeB.actor("sam"), log: busB.soulHistory!(), leases: leasesB, nodeId: "b", epoch: nodeB.epoch, onFenced: () => undefined });
    await expect(open()).rejects.toBeInstanceOf(LeaseHeldError);

    // a's machine is gone: its lease lapses (the bucket's max age), and b takes the soul over.
    // (A paused process: its renewal timer does not run; stopping the renewals is the same.)
    await leaseBusA.close();
    await until(async () => !(await leasesB.nodeAlive("a")), 10_000);
    const b = await open();
    expect(b.restored).toBe("rebuilt");
    expect(b.applied).toBe(3);
    const restored = storeB.actor("sam");
    expect(restored.loadState()).toEqual(storeA.actor("sam").loadState());
    expect(restored.kvRange!("userModel", ["ada"])).toEqual(storeA.actor("sam").kvRange!("userModel", ["ada"]));
    // Acknowledged speech is not delivered again; the last turn's, whose ack never reached the history, is.
    expect(restored.pendingOutbox().map((e) => e.id)).toEqual([sampleOutbox(3).id]);
    // Every processed perception is known, so a redelivery is dropped.
    expect(await restored.receive("p2", { content: "again" })).toBe(false);
    expect((await leasesB.holder("sam"))?.node).toBe("b");

    // The stale owner wakes up and commits: refused, and the history keeps only what b wrote.
    await expect(a.store.commitTurn({ state: sampleState(4) })).rejects.toBeInstanceOf(SoulFencedError);
    expect(fencedA).toEqual(["sam"]);
    await expect(a.store.commitTurn({ state: sampleState(5) })).rejects.toBeInstanceOf(SoulFencedError);
    await b.store.commitTurn({ state: sampleState(4) });
    const records = (await busB.soulHistory!().read("sam")).entries;
    expect(records).toHaveLength(1 + 3 + 1 + 1); // seed snapshot, three turns, b's claim, b's turn
    expect(restored.loadState()?.turn).toBe(4);
    await nodeB.release();
  }, 40_000);

  it("a node that reopens its own current copy rebuilds nothing; a copy ahead of the history (a crash between commit and append) is rebuilt", async () => {
    const cluster = uniqueCluster("fo");
    const busA = await bus(cluster);
    const leases = busA.leases!(2_000);
    const node1 = await leases.holdNode("a", "machine-a");
    const local = store();
    const first = await openReplicatedSoul({ local: local.actor("kit"), log: busA.soulHistory!(), leases, nodeId: "a", epoch: node1.epoch, onFenced: () => undefined });
    await first.store.commitTurn({ state: sampleState(1) });
    await node1.release();

    // The same machine's next process: its own lease back at once, the copy current.
    const node2 = await leases.holdNode("a", "machine-a");
    expect(node2.epoch).not.toBe(node1.epoch);
    const second = await openReplicatedSoul({ local: local.actor("kit"), log: busA.soulHistory!(), leases, nodeId: "a", epoch: node2.epoch, onFenced: () => undefined });
    expect(second.restored).toBe("current");
    // A turn committed locally whose append never happened (the process died in between).
    await local.actor("kit").commitTurn({ state: sampleState(2), kv: [{ namespace: "replica", key: ["at"], value: { n: 99, node: "a", epoch: node2.epoch } }] });
    await node2.release();
    const node3 = await leases.holdNode("a", "machine-a");
    const third = await openReplicatedSoul({ local: local.actor("kit"), log: busA.soulHistory!(), leases, nodeId: "a", epoch: node3.epoch, onFenced: () => undefined });
    expect(third.restored).toBe("rebuilt");
    expect(local.actor("kit").loadState()?.turn).toBe(1);
    await node3.release();
  }, 30_000);

  it("speech acknowledged after a soul's last turn reaches the history on its own, so a rebuild long after does not say it again", async () => {
    const cluster = uniqueCluster("fo");
    const b1 = await bus(cluster);
    const leases = b1.leases!(2_000);
    const nodeA = await leases.holdNode("a", "machine-a");
    const storeA = store();
    const a = await openReplicatedSoul({ local: storeA.actor("ivy"), log: b1.soulHistory!(), leases, nodeId: "a", epoch: nodeA.epoch, onFenced: () => undefined });
    await a.store.commitTurn({ state: sampleState(1), outbox: [sampleOutbox(1)] });
    await a.store.ackOutbox(sampleOutbox(1).id);
    // No turn follows to carry the acknowledgement: it goes on its own within a second or so.
    await until(async () => (await b1.soulHistory!().read("ivy")).entries.length === 3, 10_000); // seed, turn, acked
    await nodeA.release();

    const nodeB = await leases.holdNode("b", "machine-b");
    const storeB = store();
    const b = await openReplicatedSoul({ local: storeB.actor("ivy"), log: b1.soulHistory!(), leases, nodeId: "b", epoch: nodeB.epoch, onFenced: () => undefined });
    expect(b.restored).toBe("rebuilt");
    expect(storeB.actor("ivy").pendingOutbox()).toEqual([]);
    expect(storeB.actor("ivy").loadState()?.turn).toBe(1);
    await nodeB.release();
  }, 30_000);

  it("a revert goes to the history as a snapshot, so the soul rebuilt elsewhere is the reverted one", async () => {
    const cluster = uniqueCluster("fo");
    const b1 = await bus(cluster);
    const leases = b1.leases!(2_000);
    const nodeA = await leases.holdNode("a", "machine-a");
    const storeA = store();
    const a = await openReplicatedSoul({ local: storeA.actor("rey"), log: b1.soulHistory!(), leases, nodeId: "a", epoch: nodeA.epoch, onFenced: () => undefined });
    for (let turn = 1; turn <= 3; turn++) await a.store.commitTurn({ state: sampleState(turn), log: { kind: "turn", at: turn } });
    await storeA.actor("rey").history!.revertTo(1, "operator", Date.now());
    await a.store.snapshot();
    await nodeA.release();

    const nodeB = await leases.holdNode("b", "machine-b");
    const storeB = store();
    const b = await openReplicatedSoul({ local: storeB.actor("rey"), log: b1.soulHistory!(), leases, nodeId: "b", epoch: nodeB.epoch, onFenced: () => undefined });
    expect(b.restored).toBe("rebuilt");
    expect(storeB.actor("rey").loadState()).toEqual(storeA.actor("rey").loadState());
    expect(storeB.actor("rey").loadState()?.soulMemory).toEqual(sampleState(1).soulMemory);
    await nodeB.release();
  }, 30_000);

  it("appends are fenced on the soul's last sequence; one sent again under its id is recognised", async () => {
    const log = (await bus(uniqueCluster("fo"))).soulHistory!();
    const one = await log.append("x", new Uint8Array([1]), 0);
    await expect(log.append("x", new Uint8Array([2]), 0)).rejects.toBeInstanceOf(HistoryFencedError);
    const two = await log.append("x", new Uint8Array([3]), one, { msgId: "x:a:1:2" });
    // The same append sent again (its acknowledgement lost): recognised by its id, not fenced.
    expect(await log.append("x", new Uint8Array([3]), one, { msgId: "x:a:1:2" })).toBe(two);
    expect((await log.read("x")).entries.map((e) => [...e.data])).toEqual([[1], [3]]);
    expect((await log.read("x", one)).entries.map((e) => e.seq)).toEqual([two]);
  });

  it("a soul whose state outgrows the server's max_payload still commits: its records go in parts, read back whole, and a rebuild elsewhere has it all", async () => {
    const { a, storeA, log, takeOver } = await onNodeA("big");
    for (let turn = 1; turn <= 2; turn++) await a.store.commitTurn({ state: largeState(turn) });
    const records = (await log.read("big")).entries;
    expect(records).toHaveLength(3); // the seed snapshot, two turns
    expect(records[2]!.data.length).toBeGreaterThan(2 * 1024 * 1024);

    const { b, storeB, nodeB } = await takeOver();
    expect(b.restored).toBe("rebuilt");
    expect(storeB.actor("big").loadState()).toEqual(storeA.actor("big").loadState());
    await b.store.commitTurn({ state: largeState(3) });
    expect(storeB.actor("big").loadState()).toEqual(largeState(3));
    await nodeB.release();
  }, 40_000);

  it("a turn's record carries what changed in its working memory (appended, and a window's oldest dropped), and a rebuild elsewhere has every memory", async () => {
    const { a, storeA, log, takeOver } = await onNodeA("window");
    // A soul keeping its last 30 memories, each a few hundred bytes; every turn adds two.
    let memories: Record<string, unknown>[] = [];
    for (let turn = 1; turn <= 25; turn++) {
      const added = [0, 1].map((k) => ({ role: k === 0 ? "user" : "assistant", content: `turn ${turn} ${k} ${"words ".repeat(60)}`, _id: `m-${turn}-${k}` }));
      // From turn 10 on, equal copies rather than the same objects: compared by value.
      const kept = turn >= 10 ? memories.map((m) => ({ ...m })) : memories;
      memories = [...kept, ...added].slice(-30);
      const state = sampleState(turn);
      await a.store.commitTurn({ state: { ...state, workingMemory: { ...(state.workingMemory as object), memories } } });
    }
    const records = (await log.read("window")).entries.map((e) => ({ size: e.data.length, record: decodeRecord("window", e.data) }));
    const turns = records.filter((r) => r.record.kind === "turn");
    expect(turns).toHaveLength(25);
    // The first turn carries its memories whole; every later one only the two it added.
    expect(turns[0]!.record.v).toBe(1);
    for (const t of turns.slice(1)) {
      expect(t.record.v).toBe(2);
      expect((t.record as { memories: { add: unknown[] } }).memories.add).toHaveLength(2);
    }
    expect(turns.at(-1)!.size).toBeLessThan(4_000); // 30 memories of ~400 bytes would be over 12,000

    const { b, storeB, nodeB } = await takeOver();
    expect(b.restored).toBe("rebuilt");
    expect(b.applied).toBe(25);
    expect(storeB.actor("window").loadState()).toEqual(storeA.actor("window").loadState());
    expect((storeB.actor("window").loadState()?.workingMemory as { memories: unknown[] }).memories).toEqual(memories);
    await nodeB.release();
  }, 40_000);

  it("a lease bucket made under another lease length is brought to the config's, so a changed leaseMs takes effect", async () => {
    const cluster = uniqueCluster("fo");
    const first = (await bus(cluster)).leases!(3_000);
    const lease = await first.holdNode("n1", "i1");
    await lease.release();
    const second = (await bus(cluster)).leases!(7_000);
    expect(await second.liveNodes()).toEqual([]);
    const nc = await connect({ servers: fixture.server.url });
    try {
      const info = await (await jetstreamManager(nc)).streams.info(`KV_${nodeLeaseBucket(cluster)}`);
      expect(info.config.max_age).toBe(nanos(7_000));
    } finally {
      await nc.close();
    }
  });
});
