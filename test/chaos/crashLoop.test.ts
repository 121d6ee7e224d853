/**
 * Chaos, scenario 1: a crash loop. One `ensoul up` node hosts a fleet of echo souls on a real
 * nats-server; perceptions arrive at a steady rate (several in flight at each moment) while
 * the node is SIGKILLed at random moments and started again. Every perception must be answered
 * exactly once (the final speech as a bridge sees it, one per causation), every soul's memory
 * must hold exactly the turns it processed, and each recovery is timed: from the restart to
 * the first answer after it.
 *
 * Full (`ENSOUL_CHAOS=full`): 200 souls, 5,000 perceptions, 10 kills. Short (inside `npm test`):
 * 20 souls, 300 perceptions, 2 kills. `CHAOS_SEED` replays a run's kill moments and soul choices.
 */
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Bus } from "../../runtime/bus/index.ts";
import { connectClusterBus } from "../../runtime/node/index.ts";
import { pause, until } from "../support/cluster/busWatch.ts";
import type { NodeProcess } from "../support/cluster/cliProcess.ts";
import { uniqueCluster } from "../support/cluster/clusterKit.ts";
import { percentile, reportChaos } from "../support/chaos/chaosReport.ts";
import { chaosSize, chaosTimeout } from "../support/chaos/chaosScale.ts";
import { AnswerLedger, bySoul, fleetSoulId, seeded, soulMemory, spawnFleetNode, SteadyPublisher } from "../support/chaos/fleet.ts";
import { describeWithNats } from "../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../support/nats/natsServer.ts";
import { tempDirs } from "../support/tempDirs.ts";

const size = chaosSize({
  short: { souls: 20, perceptions: 300, kills: 2, rate: 40 },
  full: { souls: 200, perceptions: 5_000, kills: 10, rate: 40 },
});
const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));

describeWithNats("chaos: a node SIGKILLed in a loop under steady load", () => {
  const dirs = tempDirs("ensoul-chaos-crash-");
  const cluster = uniqueCluster("chaos-crash");
  let server: NatsServerHandle;
  let bus: Bus;
  let node: NodeProcess;
  let data: string;
  const up = () => spawnFleetNode({ cluster, souls: size.souls, node: "a", nats: server.url, data });

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    data = join(dirs.make(), "data");
    node = up();
    await node.waitFor(/ensoul up: ready/, 60_000);
    bus = await connectClusterBus({ servers: server.url, cluster, reconnectTimeWaitMs: 100 });
  }, 90_000);

  afterAll(async () => {
    try {
      await bus?.close();
      await node?.kill("SIGKILL");
    } finally {
      await server?.dispose();
      dirs.cleanup();
    }
  }, 30_000);

  it(
    `answers every perception exactly once across ${size.kills} kills (seed ${seed})`,
    async () => {
      const random = seeded(seed);
      const ledger = await AnswerLedger.watch(bus, "chaos-crash-watch");
      const publisher = new SteadyPublisher({ bus, total: size.perceptions, ratePerSecond: size.rate, soulCount: size.souls, random, ledger }).start();
      const window = (size.perceptions / size.rate) * 1000;
      const allAnswered = () => publisher.sent.every((x) => ledger.answered(x.id));
      // Kill moments spread over the publishing window, at random within each slot.
      const moments = Array.from({ length: size.kills }, (_, i) => ((i + 0.2 + random() * 0.6) * window) / size.kills);
      const recoveries: number[] = [];
      const downtimes: number[] = [];
      const startups: number[] = [];
      let killed = 0;
      for (const moment of moments) {
        const wait = publisher.startedAt + moment - Date.now();
        if (wait > 0) await pause(wait);
        // Killed only once the node answers again, so each kill hits a running node mid-stream.
        const before = ledger.answers;
        await until(() => ledger.answers > before || publisher.sent.length === 0 || (publisher.finished && allAnswered()), 60_000, "an answer before the next kill").catch(() => undefined);
        const killedAt = Date.now();
        expect(await node.kill("SIGKILL")).not.toBe(0);
        killed++;
        const restartedAt = Date.now();
        node = up();
        // Everything sent may be answered already: then one more perception, so the recovery has an answer to time.
        if (publisher.finished && allAnswered()) await publisher.probe();
        const restarted = node;
        void restarted.waitFor(/ensoul up: ready/, 90_000).then(
          () => startups.push(Date.now() - restartedAt),
          () => undefined,
        );
        await until(() => ledger.firstAfter(restartedAt) !== undefined, 90_000, `the first answer after restart ${killed}:\n${node.output()}`);
        const first = ledger.firstAfter(restartedAt) as number;
        recoveries.push(first - restartedAt);
        downtimes.push(first - killedAt);
      }
      await publisher.done;
      const sentAll = publisher.sent;
      await until(() => sentAll.every((s) => ledger.answered(s.id)), chaosSize({ short: 60_000, full: 240_000 }), `answers to all ${sentAll.length} perceptions (have ${ledger.byCausation.size})`).catch(() => undefined);
      const lastAnswer = Math.max(...ledger.arrivals);
      await pause(2_000); // room for anything answered twice to show up
      const audit = ledger.audit(sentAll);

      // Memory: each soul's turn count is the perceptions it processed, its working memory holds them in order.
      const expected = bySoul(sentAll);
      const corrupt: string[] = [];
      for (let i = 0; i < size.souls; i++) {
        const soul = fleetSoulId(i);
        const ids = expected.get(soul) ?? [];
        const memory = await soulMemory(bus, "a", soul);
        const problems: string[] = [];
        if (memory.turns !== ids.length) problems.push(`turns ${memory.turns}, processed ${ids.length}`);
        if (memory.inbox.pending !== 0 || memory.inbox.failed !== 0) problems.push(`inbox ${JSON.stringify(memory.inbox)}`);
        if (!memory.truncated && JSON.stringify(memory.perceived) !== JSON.stringify(ids)) problems.push(`working memory holds ${memory.perceived.length} perceptions, not the ${ids.length} sent in order`);
        if (problems.length > 0) corrupt.push(`${soul}: ${problems.join("; ")}`);
      }

      const elapsed = (lastAnswer - publisher.startedAt) / 1000;
      reportChaos(`crash loop (seed ${seed})`, [
        { name: "souls", value: size.souls },
        { name: "perceptions sent", value: sentAll.length, unit: sentAll.length > size.perceptions ? `(${sentAll.length - size.perceptions} probes after the steady run)` : "" },
        { name: "answered", value: sentAll.length - audit.missing.length },
        { name: "missing", value: audit.missing.length },
        { name: "duplicates", value: audit.duplicates.length },
        { name: "wrong answers", value: audit.wrong.length + audit.strays.length },
        { name: "redeliveries to bridge", value: ledger.redeliveries },
        { name: "kills", value: killed },
        { name: "recovery p50", value: percentile(recoveries, 50), unit: "ms (restart to first answer)" },
        { name: "recovery max", value: Math.max(...recoveries), unit: "ms" },
        { name: "process start p50", value: percentile(startups, 50), unit: "ms (restart to `ensoul up: ready`)" },
        { name: "kill to first answer max", value: Math.max(...downtimes), unit: "ms" },
        { name: "in flight p50 / max", value: `${percentile(publisher.inFlight, 50)} / ${Math.max(...publisher.inFlight)}` },
        { name: "throughput", value: sentAll.length / elapsed, unit: `answers/s (${elapsed.toFixed(1)} s, first send to last answer)` },
        { name: "souls with corrupt memory", value: corrupt.length },
      ]);
      expect(killed).toBe(size.kills);
      expect(audit.missing.map((m) => m.id)).toEqual([]);
      expect(audit.duplicates).toEqual([]);
      expect(audit.wrong).toEqual([]);
      expect(audit.strays).toEqual([]);
      expect(corrupt).toEqual([]);
    },
    chaosTimeout({ short: 120_000, full: 900_000 }),
  );
});
