/**
 * Chaos scenario 5, bad input: a flood of fuzzed envelopes (full: 10,000; short: 1,000) on the
 * perceive subjects of two live souls, on a real nats-server with a real node (in this process,
 * over NATS, LMDB in a temp dir). The node must keep serving at normal latency, and put every
 * bad one on `ensoul.<cluster>.dead` exactly once, with the reason it was refused.
 *
 * What is measured: the answer latency of valid perceptions sent at a steady rate, first alone
 * (the baseline, in the same run, so the machine's load of the moment is in both), then while
 * the flood is published and drained; and how fast the node dead-letters the flood.
 *
 * The cases come from test/support/chaos/fuzzEnvelopes.ts (fast-check, fixed seed), each known
 * to be invalid and with its expected reason. The server allows 2 MiB payloads so that
 * envelopes over the protocol's 1 MiB limit reach the node, which must refuse them itself.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterSubjects, decodeEnvelope, isKind, type Bus } from "../../runtime/bus/index.ts";
import { connectClusterBus, parseClusterConfig, startNode, type EnsoulNode } from "../../runtime/node/index.ts";
import { echoSoul } from "../support/cluster/blueprints.ts";
import { pause, until, watchDead } from "../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../support/cluster/clusterKit.ts";
import { percentile, reportChaos } from "../support/chaos/chaosReport.ts";
import { chaosSize, chaosTimeout } from "../support/chaos/chaosScale.ts";
import { caseKey, deadLetterKey, fuzzCases, type FuzzCase } from "../support/chaos/fuzzEnvelopes.ts";
import { describeWithNats } from "../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../support/nats/natsServer.ts";
import { tempDirs } from "../support/tempDirs.ts";

const SOULS = ["ann", "bob"];
const size = chaosSize({ short: { invalid: 1_000, baseline: 30 }, full: { invalid: 10_000, baseline: 100 } });
/** One valid perception every VALID_EVERY_MS, alternating souls: a steady conversation under the flood. */
const VALID_EVERY_MS = 30;
/** Flood publishes in flight at once (each waits for the stream's ack). */
const FLOOD_CONCURRENCY = 16;

describeWithNats("chaos: bad input", () => {
  const dirs = tempDirs("ensoul-chaos-bad-");
  const cluster = uniqueCluster("badinput");
  const s = clusterSubjects(cluster);
  let server: NatsServerHandle;
  let node: EnsoulNode;
  let bus: Bus;

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true, config: "max_payload: 2097152\n" });
    const config = parseClusterConfig({ cluster, souls: SOULS.map((id) => ({ id, blueprint: echoSoul })), runtime: { heartbeatMs: 200 } });
    node = await startNode({ config, nats: { servers: server.url }, nodeId: "n1", data: dirs.make(), store: { noSync: true }, log: () => undefined });
    bus = await connectClusterBus({ servers: server.url, cluster });
  });

  afterAll(async () => {
    await bus?.close();
    await node?.stop();
    await server?.dispose();
    dirs.cleanup();
  });

  it(
    `${size.invalid.toLocaleString("en-US")} fuzzed envelopes: each on dead once with its reason, every valid perception answered once, latency within bounds`,
    async () => {
      const cases = fuzzCases({ cluster, souls: SOULS, processes: echoSoul.processes, count: size.invalid, seed: 5005, oversizedEvery: 400 });
      const byKey = new Map<string, { c: FuzzCase; letters: { reason: string }[] }>(cases.map((c) => [caseKey(c.subject, c.bytes), { c, letters: [] }]));
      const strays: string[] = [];
      const dead = watchDead(bus, s.dead);
      let matched = 0;

      // Answers: the arrival time of each final, by the perception it answers.
      const answers = new Map<string, number[]>();
      const says = bus.subscribe(s.allSouls("says"), (msg) => {
        const at = performance.now();
        const d = decodeEnvelope(msg.data);
        if (d.ok && isKind(d.envelope, "speech") && d.envelope.body.final && d.envelope.causation) {
          answers.set(d.envelope.causation, [...(answers.get(d.envelope.causation) ?? []), at]);
        }
      });

      /** Valid perceptions sent, with the time each was sent and the phase it belongs to. */
      const sent: { id: string; at: number; phase: "baseline" | "flood" }[] = [];
      let sending = true;
      let phase: "baseline" | "flood" = "baseline";
      const steady = (async () => {
        for (let i = 0; sending; i++) {
          const at = performance.now();
          const env = await perceive(bus, SOULS[i % SOULS.length], `steady ${i}`);
          sent.push({ id: env.id, at, phase });
          await pause(Math.max(0, VALID_EVERY_MS - (performance.now() - at)));
        }
      })();

      // 1. Baseline: the steady conversation alone.
      await until(() => sent.length >= size.baseline, 60_000, `${size.baseline} baseline perceptions`);
      await until(() => sent.every((p) => answers.has(p.id)), 30_000, "answers to the baseline perceptions");

      // 2. The flood, published as fast as the stream acks it, while the conversation goes on.
      phase = "flood";
      const floodStart = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: FLOOD_CONCURRENCY }, async () => {
          while (next < cases.length) {
            const c = cases[next++];
            await bus.publish(c.subject, c.bytes);
          }
        }),
      );
      const published = performance.now();
      await until(() => dead.seen.length >= cases.length, chaosSize({ short: 60_000, full: 300_000 }), `${cases.length} dead letters (got ${dead.seen.length})`);
      const drained = performance.now();
      sending = false;
      await steady;
      await until(() => sent.every((p) => answers.has(p.id)), 30_000, "answers to every valid perception");
      await pause(1_000); // room for a second dead letter or a second answer to show up
      says.unsubscribe();
      dead.stop();

      // Every bad envelope on dead exactly once, with the reason its case expects; nothing else there.
      for (const letter of dead.seen) {
        const entry = byKey.get(deadLetterKey(letter));
        if (entry) entry.letters.push(letter);
        else strays.push(`${letter.subject}: ${letter.reason}`);
      }
      expect(strays).toEqual([]);
      for (const { c, letters } of byKey.values()) {
        expect(letters, `dead letters of a '${c.category}' case on ${c.subject}`).toHaveLength(1);
        if (typeof c.expect === "string") expect(letters[0].reason).toBe(c.expect);
        else expect(letters[0].reason).toMatch(c.expect);
        matched++;
      }
      expect(matched).toBe(cases.length);
      await until(() => node.status().counters.dead === cases.length, 5_000, "the node to count every dead letter");

      // Every valid perception answered exactly once, and none of them refused.
      for (const p of sent) expect(answers.get(p.id), `answers to ${p.id}`).toHaveLength(1);
      expect(node.status().counters.perceptions).toBe(sent.length);
      const latency = (which: "baseline" | "flood") => sent.filter((p) => p.phase === which).map((p) => (answers.get(p.id) as number[])[0] - p.at);
      const base = latency("baseline");
      const flood = latency("flood");
      expect(flood.length).toBeGreaterThan(0);
      const [b50, b95, f50, f95] = [percentile(base, 50), percentile(base, 95), percentile(flood, 50), percentile(flood, 95)];

      const categories = new Map<string, number>();
      for (const c of cases) categories.set(c.category, (categories.get(c.category) ?? 0) + 1);
      reportChaos("bad input (fuzzed envelopes on perceive)", [
        { name: "fuzzed envelopes", value: cases.length },
        { name: "categories", value: [...categories].map(([k, n]) => `${k} ${n}`).join(", ") },
        { name: "dead letters, matched once each", value: `${dead.seen.length}, ${matched}` },
        { name: "flood published in", value: Math.round(published - floodStart), unit: "ms" },
        { name: "flood dead-lettered in", value: Math.round(drained - floodStart), unit: "ms" },
        { name: "flood throughput (to last dead letter)", value: Math.round(cases.length / ((drained - floodStart) / 1000)), unit: "/s" },
        { name: "valid perceptions (baseline, flood)", value: `${base.length}, ${flood.length}` },
        { name: "answered once each", value: sent.filter((p) => answers.get(p.id)?.length === 1).length },
        { name: "latency baseline p50 / p95", value: `${b50.toFixed(1)} / ${b95.toFixed(1)}`, unit: "ms" },
        { name: "latency in flood p50 / p95", value: `${f50.toFixed(1)} / ${f95.toFixed(1)}`, unit: "ms" },
      ]);
      // Wide margins on a shared two-core machine: slower under load is fine, stalled is not.
      expect(f50).toBeLessThan(10 * b50 + 200);
      expect(f95).toBeLessThan(10 * b95 + 1_000);
    },
    chaosTimeout({ short: 90_000, full: 900_000 }),
  );
});
