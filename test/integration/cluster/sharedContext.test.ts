/**
 * Shared context and ephemeral events on a real nats-server (issue 15): two souls on two
 * nodes incrementing one key of one shared context at the same time lose no write, a client
 * watching the context sees the changes, and a soul's ephemeral events reach an events-subject
 * subscriber and an HTTP bridge's SSE and WebSocket clients without being stored anywhere.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { expect, it } from "vitest";
import WebSocket from "ws";
import { defineSoul, emitEphemeral, useActions, usePerceptions, useSharedContext, type MentalProcess } from "../../../actors/soul/index.ts";
import { clusterSubjects, openSharedContext, streamName, type SharedChange } from "../../../runtime/bus/index.ts";
import { parseClusterConfig } from "../../../runtime/node/index.ts";
import { openSse } from "../../support/bridges/sse.ts";
import { until, watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { natsNodes } from "../../support/cluster/natsNodes.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";

const TOKEN = "shared-context-test-token-5e1d";
const N = 25;
/** Calls of the counting function: more than 2N means some writes lost a race and were retried. */
let attempts = 0;

/** `count <n>`: adds one to `tally.count`, n times, each a read-modify-write racing the other soul's. */
const counting: MentalProcess = async ({ workingMemory }) => {
  const times = Number(usePerceptions().invokingPerception.content.split(" ")[1]);
  const tally = useSharedContext("tally");
  await tally.ready;
  // A barrier in the context itself: neither soul starts counting before both are there, so the writes really race.
  await tally.update<number>("arrived", (n) => (n ?? 0) + 1);
  while ((await tally.get("arrived")) !== 2) await new Promise((r) => setTimeout(r, 5));
  for (let i = 0; i < times; i++) {
    await tally.update<number>("count", (n) => {
      attempts++;
      return (n ?? 0) + 1;
    });
  }
  useActions().speak(`counted ${times}`);
  return workingMemory;
};
const counter = defineSoul({ name: "Counter", persona: "Counts.", initialProcess: counting, processes: { counting } });

/** Emits a typing indicator and a progress note (both hook shapes), tries one too large, then speaks. */
const typing: MentalProcess = async ({ workingMemory }) => {
  const { content } = usePerceptions().invokingPerception;
  emitEphemeral("typing", { on: true, marker: `ephemeral-${content}` });
  useActions().emitEphemeral({ type: "progress", data: { step: 1 } });
  let refused = "";
  try {
    emitEphemeral("big", "x".repeat(70 * 1024));
  } catch (err) {
    refused = (err as Error).message;
  }
  useActions().speak(`spoken-${content} (${refused})`);
  return workingMemory;
};
const typer = defineSoul({ name: "Typer", persona: "Types.", initialProcess: typing, processes: { typing } });

/** Every file under a directory, as one buffer: LMDB keeps msgpack strings as their UTF-8 bytes. */
function allBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    parts.push(statSync(path).isDirectory() ? allBytes(path) : readFileSync(path));
  }
  return Buffer.concat(parts);
}

describeWithNats("shared context and ephemeral events on a real nats-server", () => {
  const fixture = natsNodes();
  const { nodes } = fixture;

  const startCluster = async (cluster: string) => {
    const config = parseClusterConfig({
      cluster,
      nodes: ["a", "b"],
      souls: [
        { id: "left", blueprint: counter, node: "a" },
        { id: "right", blueprint: counter, node: "b" },
        { id: "typer", blueprint: typer, node: "a" },
      ],
      bridges: [{ type: "http", soul: "typer", options: { port: 0 } }],
      runtime: { heartbeatMs: 200, ackWaitMs: 5_000 },
    });
    const data: Record<string, string> = {};
    for (const nodeId of ["a", "b"]) {
      data[nodeId] = fixture.dirs.make();
      await fixture.startNode({ config, nodeId, data: data[nodeId], env: { ENSOUL_HTTP_TOKEN: TOKEN } });
    }
    const bus = await fixture.client(cluster);
    return { bus, data };
  };

  it("two souls on two nodes incrementing one key at once lose no write, and a watching client sees the changes", async () => {
    const cluster = uniqueCluster("shared");
    const { bus } = await startCluster(cluster);
    const watcher = openSharedContext(bus.sharedKv!(), "tally");
    await watcher.ready;
    const changes: SharedChange[] = [];
    watcher.watch((c) => changes.push(c));
    const says = watchEnvelopes(bus, clusterSubjects(cluster).allSouls("says"), "speech");

    const [l, r] = await Promise.all([perceive(bus, "left", `count ${N}`), perceive(bus, "right", `count ${N}`)]);
    for (const p of [l, r]) await says.next((e) => e.body.final && e.causation === p.id, 30_000, `the answer to ${p.to}`);

    expect(await watcher.get("count")).toBe(2 * N);
    expect(attempts).toBeGreaterThanOrEqual(2 * N);
    await until(() => watcher.data["count"] === 2 * N, 5_000, "the watcher's view to reach the final count");
    // Every increment is one change, seen in revision order: nothing lost, nothing doubled.
    const counts = changes.filter((c) => c.key === "count");
    expect(counts.map((c) => c.value)).toEqual(Array.from({ length: 2 * N }, (_, i) => i + 1));
    expect(changes.every((c, i) => i === 0 || c.revision > (changes[i - 1] as SharedChange).revision)).toBe(true);
    expect(watcher.revision).toBe(changes.at(-1)?.revision);

    // Another client writing with a stale revision is refused; the key is cluster state, readable by anyone.
    const kv = bus.sharedKv!();
    const entry = await kv.get("tally", "count");
    await expect(kv.swap("tally", "count", 0, (entry?.revision ?? 0) - 1)).rejects.toThrow(/changed since revision/);
    expect((await kv.get("tally", "count"))?.value).toBe(2 * N);
  });

  it("ephemeral events reach an events subscriber and an SSE client, and nothing stores them", async () => {
    const cluster = uniqueCluster("ephemeral");
    const { bus, data } = await startCluster(cluster);
    const url = nodes[0]?.status().bridges?.find((b) => b.soul === "typer")?.url;
    if (!url) throw new Error(`no bridge url in ${JSON.stringify(nodes[0]?.status().bridges)}`);
    const sse = await openSse(`${url}speech`, { Authorization: `Bearer ${TOKEN}` });
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}ws`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const frames: { type: string; event?: string; data?: unknown }[] = [];
    ws.on("message", (raw) => frames.push(JSON.parse(String(raw))));
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const events = watchEnvelopes(bus, clusterSubjects(cluster).events("typer"), "event");
    const says = watchEnvelopes(bus, clusterSubjects(cluster).says("typer"), "speech");

    const p = await perceive(bus, "typer", "m7q2");
    const typingEvent = await events.next((e) => e.body.type === "soul.ephemeral" && (e.body.data as { type: string }).type === "typing", 10_000, "the typing event");
    expect(typingEvent.from).toBe("typer");
    expect(typingEvent.body.data).toEqual({ type: "typing", data: { on: true, marker: "ephemeral-m7q2" } });
    await events.next((e) => e.body.type === "soul.ephemeral" && (e.body.data as { type: string }).type === "progress", 10_000, "the progress event");
    expect(events.seen.filter((e) => (e.body.data as { type?: string } | undefined)?.type === "big")).toEqual([]);

    const got = await sse.until((es) => es.some((e) => e.event === "ephemeral" && JSON.parse(e.data).type === "progress"));
    sse.close();
    const ephemeral = got.filter((e) => e.event === "ephemeral");
    expect(ephemeral.map((e) => JSON.parse(e.data))).toEqual([
      { type: "typing", data: { on: true, marker: "ephemeral-m7q2" } },
      { type: "progress", data: { step: 1 } },
    ]);
    // Not in the speech log: no SSE id, so a client's Last-Event-ID is left as it was.
    expect(ephemeral.every((e) => e.id === undefined)).toBe(true);
    await until(() => frames.some((f) => f.event === "progress"), 5_000, "the progress event over the WebSocket");
    ws.close();
    expect(frames.filter((f) => f.type === "ephemeral")).toEqual([
      { type: "ephemeral", event: "typing", data: { on: true, marker: "ephemeral-m7q2" } },
      { type: "ephemeral", event: "progress", data: { step: 1 } },
    ]);

    const final = await says.next((e) => e.body.final && e.causation === p.id, 10_000, "the typer's answer");
    expect(final.body.text).toMatch(/^spoken-m7q2 \(emitEphemeral\('big'\): the event is \d+ bytes encoded, over the limit of 65536\)$/);
    await nodes[0]?.idle();

    // Stored nowhere: the node's LMDB holds the speech (the control) but not the event, and the cluster stream has no events subject.
    const stored = allBytes(join(data["a"] as string, "a"));
    expect(stored.includes("spoken-m7q2")).toBe(true);
    expect(stored.includes("ephemeral-m7q2")).toBe(false);
    const nc = await connect({ servers: fixture.server.url });
    try {
      const info = await (await jetstreamManager(nc)).streams.info(streamName(cluster), { subjects_filter: ">" });
      expect(Object.keys(info.state.subjects ?? {}).filter((s) => s.endsWith(".events"))).toEqual([]);
      expect(Object.keys(info.state.subjects ?? {})).toContain(clusterSubjects(cluster).says("typer"));
    } finally {
      await nc.close();
    }
  });
});
