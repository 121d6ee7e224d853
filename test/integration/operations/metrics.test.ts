/**
 * `ensoul up --metrics`: a node started with metrics serves Prometheus text at GET /metrics,
 * and each series counts what happened: turns per soul and process with their latency,
 * provider calls with tokens and failures per provider and model, gate decisions, dead letters
 * by category, duplicates, and the souls by status with their queues.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineSoul, useActions, type MentalProcess } from "../../../actors/soul/index.ts";
import { clusterSubjects, encodeEnvelope, makeEnvelope } from "../../../runtime/bus/index.ts";
import { externalDialog } from "../../../runtime/cognition/index.ts";
import { serveMetrics, type MetricsServer } from "../../../runtime/metrics/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { ModelRegistry } from "../../../runtime/providers/index.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { countingModel } from "../../support/operations/countingModel.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const talk: MentalProcess = async ({ workingMemory }) => {
  const [memory, reply] = await externalDialog(workingMemory, "Answer briefly.", { model: "fake:small" });
  useActions().speak(reply);
  return memory;
};
const talker = defineSoul({ name: "Talker", persona: "Says little.", initialProcess: talk, processes: { talk } });

/** The value of one series, e.g. `ensoul_turns_total{soul="echo",process="echo"}`; undefined when it is not there. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("a node's metrics", () => {
  const dirs = tempDirs();
  const fake = countingModel();
  let node: EnsoulNode;
  let server: MetricsServer;
  const cluster = "metered";

  beforeAll(async () => {
    const config = parseClusterConfig({
      cluster,
      providers: { default: "fake:small" },
      souls: [
        { id: "echo", blueprint: echoSoul, streamChunks: false },
        { id: "talker", blueprint: talker, streamChunks: false },
        { id: "idle", blueprint: echoSoul },
      ],
      gates: [{ builtin: "length", souls: ["echo"], options: { maxChars: 2000 } }],
    });
    node = await startNode({ config, data: dirs.make(), store: { noSync: true }, registry: new ModelRegistry().register("fake", fake), metrics: true, log: () => undefined });
    server = await serveMetrics(node.metrics!, { host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await node?.stop();
    dirs.cleanup();
  });

  it("counts turns, provider calls, tokens, failures, decisions, dead letters and duplicates", async () => {
    const events = watchEnvelopes(node.bus, `ensoul.${cluster}.soul.*.events`, "event");
    await perceive(node.bus, "echo", "one");
    await perceive(node.bus, "echo", "two");
    await perceive(node.bus, "talker", "how are you?");
    await events.next((e) => e.body.type === "soul.turn" && e.to === "talker", 10_000, "the talker's turn");
    fake.failNext("rate_limit");
    await perceive(node.bus, "talker", "and now?");
    await events.next((e) => e.body.type === "soul.error" && e.to === "talker", 10_000, "the talker's failed turn");
    // The same perception twice, past the stream's own dedupe (no msgId): the soul's inbox drops the second.
    const again = encodeEnvelope(makeEnvelope("perception", "bridge-test", "echo", { action: "said", content: "again", name: "ada" }));
    await node.bus.publish(clusterSubjects(cluster).perceive("echo"), again);
    await node.bus.publish(clusterSubjects(cluster).perceive("echo"), again);
    // Not an envelope at all: dead-lettered as invalid, its bytes never a label.
    await node.bus.publish(clusterSubjects(cluster).perceive("echo"), new TextEncoder().encode("not msgpack: EVIL-PAYLOAD-7"));
    await events.next((e) => e.body.type === "soul.turn" && e.to === "echo" && (e.body.data as { turn: number }).turn === 3, 10_000, "the echo's third turn");
    await node.idle();

    const response = await fetch(server.url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();

    expect(sample(text, 'ensoul_turns_total{soul="echo",process="echo"}')).toBe(3);
    expect(sample(text, 'ensoul_turns_total{soul="talker",process="talk"}')).toBe(1);
    expect(sample(text, 'ensoul_turn_duration_seconds_count{soul="echo",process="echo"}')).toBe(3);
    expect(sample(text, 'ensoul_turn_duration_seconds_bucket{le="+Inf",soul="echo",process="echo"}')).toBe(3);
    expect(sample(text, 'ensoul_turn_failures_total{soul="talker",phase="process"}')).toBe(1);

    expect(sample(text, 'ensoul_provider_calls_total{provider="fake",model="small"}')).toBe(2);
    expect(sample(text, 'ensoul_provider_failures_total{provider="fake",model="small",kind="rate_limit"}')).toBe(1);
    expect(sample(text, 'ensoul_provider_tokens_total{provider="fake",model="small",direction="input"}')).toBe(10);
    expect(sample(text, 'ensoul_provider_tokens_total{provider="fake",model="small",direction="output"}')).toBe(5);
    expect(sample(text, 'ensoul_provider_call_duration_seconds_count{provider="fake",model="small"}')).toBe(2);

    // Each speech passes the chain twice: at review, before the turn commits, and at dispatch, before it leaves.
    expect(sample(text, 'ensoul_gate_decisions_total{soul="echo",gate="length",decision="pass",phase="review"}')).toBe(3);
    expect(sample(text, 'ensoul_gate_decisions_total{soul="echo",gate="length",decision="pass",phase="dispatch"}')).toBe(3);
    expect(sample(text, 'ensoul_dead_letters_total{reason="invalid-envelope"}')).toBe(1);
    expect(text).not.toContain("EVIL-PAYLOAD");
    expect(sample(text, "ensoul_perceptions_deduplicated_total")).toBe(1);
    expect(sample(text, "ensoul_perceptions_total")).toBe(5);

    expect(sample(text, 'ensoul_souls{status="active"}')).toBe(2);
    expect(sample(text, 'ensoul_souls{status="passivated"}')).toBe(1);
    expect(sample(text, 'ensoul_soul_queue_depth{soul="echo"}')).toBe(0);
    expect(sample(text, `ensoul_node_info{node="local",cluster="${cluster}"}`)).toBe(1);
    // The process's own series come along (CPU, memory, event loop).
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    events.stop();
  });

  it("answers only GET /metrics", async () => {
    const base = server.url.replace(/\/metrics$/, "");
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(server.url, { method: "POST" })).status).toBe(405);
  });
});

describe("a node without metrics", () => {
  it("has none", async () => {
    const dirs = tempDirs();
    const node = await startNode({ config: parseClusterConfig({ cluster: "plain", souls: [{ id: "echo", blueprint: echoSoul }] }), data: dirs.make(), store: { noSync: true }, log: () => undefined });
    try {
      expect(node.metrics).toBeUndefined();
    } finally {
      await node.stop();
      dirs.cleanup();
    }
  });
});
