/**
 * What the HTTP bridge promises when the publish of a perception fails (fault point
 * `http.publish`, the bus publish of the perception a request makes): the client gets a clear
 * 503, and a retry with the same Idempotency-Key is answered exactly once, whether the publish
 * never landed (`fail`), landed with its acknowledgement lost (`ackLost`), or was slow. What
 * the node counts stays exact through it: one perception and one answer posted per key, and
 * one deduplicated perception per repeat sent after the key was taken.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import { bridgeCounters, metric, startHttpNode } from "../../support/bridges/httpNode.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { faultSchedule, withFaults } from "../../support/faults/faultArbitraries.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
let node: EnsoulNode;
let post: (content: string, key: string) => Promise<Response>;

beforeAll(async () => {
  ({ node, post } = await startHttpNode({ cluster: "web", data: dirs.make(), token: "http-faults-token-91b2", options: { rateLimit: { perMinute: 60_000, burst: 10_000 } } }));
});
afterAll(async () => {
  await node?.stop();
  dirs.cleanup();
});

/** Posts until the bridge takes it (a client following docs/HTTP.md: 503 means send it again with the same key). */
async function postUntilTaken(content: string, key: string): Promise<{ id: string; refusals: string[] }> {
  const refusals: string[] = [];
  for (let attempt = 0; attempt < 20; attempt++) {
    const res = await post(content, key);
    const body = (await res.json()) as { id?: string; error?: string };
    if (res.status === 202) return { id: body.id!, refusals };
    expect(res.status).toBe(503);
    refusals.push(body.error ?? "");
  }
  throw new Error(`${key}: never taken`);
}

/** The finals the bridge logged for each perception (what SSE and WebSocket clients are sent). */
function finalsByPerception(): Map<string, number> {
  const finals = new Map<string, number>();
  for (const e of node.store.kv<{ event: string; perception: string }>("bridge-http-echo", "speech").range()) {
    if (e.value.event === "final") finals.set(e.value.perception, (finals.get(e.value.perception) ?? 0) + 1);
  }
  return finals;
}

async function answeredOnce(ids: readonly string[]): Promise<void> {
  await until(() => ids.every((id) => finalsByPerception().has(id)), 10_000, () => `an answer to each of ${ids.join(", ")}; logged: ${JSON.stringify([...finalsByPerception()])}`);
  await node.idle();
  const finals = finalsByPerception();
  expect(ids.map((id) => finals.get(id))).toEqual(ids.map(() => 1));
}

/** What the node counts of the bridge: its counters (`ensoul status`) and the deduplicated perceptions metric. */
async function counts(): Promise<{ perceptions: number; posted: number; duplicates: number; deduplicated: number }> {
  const c = bridgeCounters(node);
  return { perceptions: c["perceptions"] ?? 0, posted: c["posted"] ?? 0, duplicates: c["duplicates"] ?? 0, deduplicated: await metric(node, "ensoul_perceptions_deduplicated_total") };
}

const minus = (a: Awaited<ReturnType<typeof counts>>, b: typeof a) => ({ perceptions: a.perceptions - b.perceptions, posted: a.posted - b.posted, duplicates: a.duplicates - b.duplicates, deduplicated: a.deduplicated - b.deduplicated });

describe("the HTTP bridge under faults at http.publish", () => {
  it("a publish that fails before it lands: 503 saying to retry with the same key; nothing reaches the soul; the retry is answered once", async () => {
    await withFaults([{ point: "http.publish", fault: { kind: "fail" } }], async (plan) => {
      const { id, refusals } = await postUntilTaken("fails first", "fail-1");
      expect(plan.injected("http.publish")).toHaveLength(1);
      expect(refusals).toEqual([expect.stringMatching(/not confirmed stored on the bus; send it again with the same Idempotency-Key/)]);
      await answeredOnce([id]);
    });
  });

  it("a publish that lands with its acknowledgement lost: 503; the retry is a repeat the soul does not answer again, and its one answer reaches the client", async () => {
    await withFaults([{ point: "http.publish", fault: { kind: "ackLost" } }], async (plan) => {
      const { id, refusals } = await postUntilTaken("lands unheard", "acklost-1");
      expect(plan.injected("http.publish")).toHaveLength(1);
      expect(refusals).toHaveLength(1);
      await answeredOnce([id]);
    });
  });

  it("property: whatever fails, loses its ack or is slow at http.publish, each key retried until taken is answered exactly once", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(faultSchedule({ points: ["http.publish"], maxNth: 5 }), async (rules) => {
        run++;
        const keys = [0, 1, 2, 3].map((n) => `prop-${run}-${n}`);
        const before = await counts();
        await withFaults(rules, async () => {
          const taken = await Promise.all(keys.map((key, n) => postUntilTaken(`run ${run} message ${n}`, key)));
          await answeredOnce(taken.map((t) => t.id));
        });
        // Each key sent once more, once taken: a duplicate, counted as one.
        for (const key of keys) expect(((await (await post("again", key)).json()) as { status: string }).status).toBe("duplicate");
        await until(() => (bridgeCounters(node)["posted"] ?? 0) - before.posted >= keys.length, 5_000, "the answers counted posted");
        expect(minus(await counts(), before)).toEqual({ perceptions: keys.length, posted: keys.length, duplicates: keys.length, deduplicated: keys.length });
      }),
      { numRuns: 12 },
    );
  });
});
