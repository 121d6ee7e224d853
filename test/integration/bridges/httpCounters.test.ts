/**
 * What the node counts of its HTTP bridge: a repeat under the same Idempotency-Key (POST or
 * WebSocket) is a perception dropped as a duplicate, so `ensoul_perceptions_deduplicated_total`
 * counts it as it counts a Slack retry; and an answer that went out on the speech stream (SSE
 * and WebSocket read the bridge's speech log) is `posted` in the bridge's counters, which
 * `ensoul status` and `ensoul up` show, once per answer however many clients read it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import { bridgeCounters, metric, startHttpNode } from "../../support/bridges/httpNode.ts";
import { openSse } from "../../support/bridges/sse.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
const TOKEN = "http-counters-token-3c8d";
const auth = { Authorization: `Bearer ${TOKEN}` };
let node: EnsoulNode;
let base: string;
let post: (content: string, key: string) => Promise<Response>;

beforeAll(async () => {
  ({ node, base, post } = await startHttpNode({ cluster: "counted", data: dirs.make(), token: TOKEN }));
});
afterAll(async () => {
  await node?.stop();
  dirs.cleanup();
});

const deduplicated = () => metric(node, "ensoul_perceptions_deduplicated_total");
const counters = () => bridgeCounters(node);

/** A WebSocket that sends one perception frame and resolves with the frames until its answer (or its `duplicate`). */
async function overSocket(content: string, key: string, until: "final" | "accepted"): Promise<{ type: string; status?: string }[]> {
  const ws = new WebSocket(`${base.replace("http", "ws")}/v1/souls/echo/ws`, { headers: auth });
  const frames: { type: string; status?: string }[] = [];
  ws.on("message", (d) => frames.push(JSON.parse(d.toString()) as { type: string }));
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  ws.send(JSON.stringify({ type: "perception", content, name: "Grace", idempotencyKey: key }));
  const deadline = Date.now() + 10_000;
  while (!frames.some((f) => f.type === until) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  ws.close();
  return frames;
}

describe("the node's counts of its HTTP bridge", () => {
  it("a repeat of an Idempotency-Key is a deduplicated perception; each answer that went out is posted once", async () => {
    const before = await deduplicated();
    const sse = await openSse(`${base}/v1/souls/echo/speech`, auth);
    const second = await openSse(`${base}/v1/souls/echo/speech`, auth);
    const { id } = (await (await post("once", "count-1")).json()) as { id: string };
    await sse.until((es) => es.some((e) => e.event === "final" && JSON.parse(e.data).perception === id));
    await second.until((es) => es.some((e) => e.event === "final" && JSON.parse(e.data).perception === id));
    expect(await (await post("once", "count-1")).json()).toEqual({ id, status: "duplicate" });
    sse.close();
    second.close();
    expect(await deduplicated()).toBe(before + 1);
    // Two clients read the answer: it went out once.
    expect(counters()).toMatchObject({ perceptions: 1, duplicates: 1, posted: 1 });
  });

  it("the same over the WebSocket", async () => {
    const before = await deduplicated();
    const frames = await overSocket("by socket", "count-ws", "final");
    expect(frames.filter((f) => f.type === "final")).toHaveLength(1);
    expect((await overSocket("by socket", "count-ws", "accepted")).find((f) => f.type === "accepted")).toMatchObject({ status: "duplicate" });
    expect(await deduplicated()).toBe(before + 1);
    expect(counters()).toMatchObject({ perceptions: 2, duplicates: 2, posted: 2 });
  });
});
