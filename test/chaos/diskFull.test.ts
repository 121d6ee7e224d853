/**
 * Chaos scenario 7, disk full: a soul's LMDB map fills up. The soul must say so clearly (an
 * error event and a log line naming the full map and what to raise), keep its last committed
 * state exactly, keep the perceptions it could not commit, and, once the operator has done what
 * the error says (restart the node with a bigger `store.mapSize`), process each of them once.
 *
 * Why a restart with a bigger map: that is what the message tells an operator to do, and the
 * store cannot be made room in live: its limit counts the data file's high-water mark, which
 * deleting records never lowers (runtime/store/MapLimit.ts). The bus is an in-process one
 * shared by the node's successive lives, as a NATS stream would be, so the test's watchers see
 * everything; the LMDB is real, in a temp dir.
 *
 * Each round fills the map by conversation alone (big perceptions that the echo soul keeps in
 * its working memory), sends more perceptions while it is full, then restarts the node with
 * 1 MiB more room. Short: one round; full: several, each on top of the last.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clusterSubjects, createInProcessBus, type Envelope } from "../../runtime/bus/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode, type SoulMemoryReply } from "../../runtime/node/index.ts";
import { openStore } from "../../runtime/store/index.ts";
import { echoSoul } from "../support/cluster/blueprints.ts";
import { until, watchDead, watchEnvelopes } from "../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../support/cluster/clusterKit.ts";
import { reportChaos } from "../support/chaos/chaosReport.ts";
import { chaosSize, chaosTimeout } from "../support/chaos/chaosScale.ts";
import { tempDirs } from "../support/tempDirs.ts";

const MiB = 1024 * 1024;
/** Each perception and its echo add ~2× this to the working memory: a 1 MiB map fills in ~20 turns. */
const CONTENT_BYTES = 16 * 1024;
const SOUL = "hoarder";
const NODE = "n1";
const MAP_FULL = /^LMDB map is full at .+ \(mapSize \d+ bytes\); raise store\.mapSize$/;
const size = chaosSize({ short: { rounds: 1, whileFull: 3 }, full: { rounds: 5, whileFull: 12 } });

type Memories = { memories: { id: string; content: unknown; metadata?: { perceptionId?: string } }[] };
const memoriesOf = (reply: Pick<SoulMemoryReply, "workingMemory">) => (reply.workingMemory as Memories).memories;

describe("chaos: disk full", () => {
  const dirs = tempDirs("ensoul-chaos-disk-");

  it(
    "a full LMDB map: a clear error, the last commit intact, nothing lost, and each kept perception processed once after a restart with room",
    async () => {
      const cluster = uniqueCluster("diskfull");
      const s = clusterSubjects(cluster);
      const data = dirs.make();
      const config = parseClusterConfig({ cluster, souls: [{ id: SOUL, blueprint: echoSoul }], runtime: { heartbeatMs: 200 } });
      const bus = createInProcessBus({ cluster });
      const logs: string[] = [];
      const start = (mapSize: number) => startNode({ config, bus, placement: "all", nodeId: NODE, data, store: { noSync: true, mapSize }, log: (line) => logs.push(line) });
      const finals = watchEnvelopes(bus, s.says(SOUL), "speech");
      const events = watchEnvelopes(bus, s.events(SOUL), "event");
      const dead = watchDead(bus, s.dead);
      const answered = (id: string) => finals.seen.some((e) => e.body.final && e.causation === id);
      const errorOf = (id: string) => events.seen.find((e) => e.body.type === "soul.error" && e.causation === id);
      const deadFor = (id: string) => dead.seen.find((d) => Buffer.from(d.head, "base64").includes(Buffer.from(id)));

      /** Perceptions the soul took (in the order sent), and those refused at the door with a dead letter. */
      const taken: string[] = [];
      const refused: string[] = [];
      let sent = 0;
      const figures = { turnsBeforeFull: [] as number[], usedAtFull: [] as number[], kept: 0, refused: 0, restartMs: [] as number[], drainMs: [] as number[] };
      let mapSize = 1 * MiB;
      let node: EnsoulNode = await start(mapSize);
      try {
        for (let round = 1; round <= size.rounds; round++) {
          // 1. Converse until a commit is refused. Each turn waits for its answer or its error, so
          //    "the last successful commit" is known exactly: the memory read after the last answer.
          let lastGood: SoulMemoryReply = node.memory(SOUL);
          const turnsAtStart = lastGood.turns;
          let failed: Envelope<"perception"> | undefined;
          while (!failed) {
            const p = await perceive(node.bus, SOUL, `${++sent}:`.padEnd(CONTENT_BYTES, "x"));
            taken.push(p.id);
            await until(() => answered(p.id) || errorOf(p.id) !== undefined, 10_000, `the answer or the error for perception ${sent}`);
            if (answered(p.id)) {
              await node.idle();
              lastGood = node.memory(SOUL);
            } else failed = p;
            expect(sent).toBeLessThan(2_000); // the map must fill at some point
          }
          figures.turnsBeforeFull.push(lastGood.turns - turnsAtStart);
          figures.usedAtFull.push(node.store.usedBytes());
          // The soul says what is wrong and what to do, on its events subject and in the node's log.
          expect((errorOf(failed.id)?.body.data as { message?: string }).message).toMatch(MAP_FULL);
          expect(logs.some((l) => l.includes(SOUL) && /LMDB map is full at .+; raise store\.mapSize/.test(l))).toBe(true);

          // 2. More perceptions while full. Each is kept (in the inbox, pending: its turn fails
          //    and the soul reports it) or, once even the inbox write is refused, refused at the
          //    door: the bus redelivers it a few times, then puts it on `dead` naming the full
          //    map. Either way, never silently gone, and the test knows which.
          const whileFull = [failed.id];
          const inbox = node.store.actor(SOUL);
          const more: string[] = [];
          for (let k = 0; k < size.whileFull; k++) more.push((await perceive(node.bus, SOUL, `${++sent}:`.padEnd(CONTENT_BYTES, "x"))).id);
          // In the inbox at all counts as kept here; that it is pending, not failed, is checked below.
          const fate = (id: string) => (inbox.inboxEntry(id) ? "kept" : deadFor(id) ? "refused" : undefined);
          await until(() => more.every((id) => fate(id) !== undefined), 20_000, "every perception sent while full to be kept or dead-lettered");
          for (const id of more) {
            if (fate(id) === "kept") {
              taken.push(id);
              whileFull.push(id);
            } else {
              expect(deadFor(id)?.reason).toMatch(/^handler failed on delivery \d+, the last one allowed: LMDB map is full/);
              refused.push(id);
            }
          }
          await node.idle();
          // The live soul still stands on its last successful commit; none of these was answered.
          expect(whileFull.filter(answered)).toEqual([]);
          expect(node.memory(SOUL).turns).toBe(lastGood.turns);
          await node.stop();

          // 3. What LMDB holds, read back as a fresh process would: the last good commit, exactly,
          //    and every kept perception pending in the inbox, in order (not failed: that would
          //    mean nothing retries it once there is room).
          const reader = openStore({ path: join(data, NODE), reader: true });
          try {
            const actor = reader.actor(SOUL);
            const state = actor.loadState();
            expect(state?.turn).toBe(lastGood.turns);
            expect((state?.workingMemory as Memories | undefined)?.memories.map((m) => [m.id, m.content])).toEqual(memoriesOf(lastGood).map((m) => [m.id, m.content]));
            expect(actor.pendingInbox().map((e) => e.id)).toEqual(whileFull);
            expect(actor.failedInbox()).toEqual([]);
          } finally {
            await reader.close();
          }
          figures.kept += whileFull.length;

          // 4. The operator raises store.mapSize and starts the node again: the soul goes on,
          //    and processes what it kept, each once.
          mapSize += MiB;
          const restartAt = Date.now();
          node = await start(mapSize);
          figures.restartMs.push(Date.now() - restartAt);
          await until(() => whileFull.every(answered), 15_000, "answers to every kept perception");
          figures.drainMs.push(Date.now() - restartAt);
          await node.idle();
          expect(node.memory(SOUL).inbox).toEqual({ pending: 0, failed: 0 });
        }

        // Across every round: each taken perception answered exactly once, in the order sent,
        // and nothing on `dead` but the perceptions refused at the door.
        await node.idle();
        for (const id of taken) expect(finals.seen.filter((e) => e.body.final && e.causation === id)).toHaveLength(1);
        const reply = node.memory(SOUL);
        expect(reply.turns).toBe(taken.length);
        expect(memoriesOf(reply).map((m) => m.metadata?.perceptionId).filter((id) => id !== undefined)).toEqual(taken);
        expect(dead.seen).toHaveLength(refused.length);
        for (const id of refused) expect(answered(id)).toBe(false);
        figures.refused = refused.length;
      } finally {
        await node.stop();
        await bus.close();
        dirs.cleanup();
      }

      reportChaos("disk full (LMDB map)", [
        { name: "rounds (fill, restart with +1 MiB)", value: size.rounds },
        { name: "perceptions sent", value: sent },
        { name: "turns committed before each fill", value: figures.turnsBeforeFull.join(", ") },
        { name: "data file at each fill", value: figures.usedAtFull.map((b) => (b / MiB).toFixed(2)).join(", "), unit: "MiB" },
        { name: "perceptions kept while full", value: figures.kept },
        { name: "refused at the door (dead-lettered)", value: figures.refused },
        { name: "node restart", value: figures.restartMs.join(", "), unit: "ms" },
        { name: "restart to last kept answer", value: figures.drainMs.join(", "), unit: "ms" },
        { name: "taken, answered once each", value: `${taken.length}, ${taken.filter((id) => finals.seen.filter((e) => e.body.final && e.causation === id).length === 1).length}` },
      ]);
    },
    chaosTimeout({ short: 60_000, full: 600_000 }),
  );
});
