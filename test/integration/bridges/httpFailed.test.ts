/**
 * A perception the soul will not answer reaches the HTTP client as a `failed` event with the
 * reason (docs/HTTP.md 5, 6): on SSE, logged like speech (so resumed with Last-Event-ID), and on
 * the WebSocket that sent it; the node's log names the perception. Whatever a turn ends in (an
 * answer, an exception in the soul's code, an undeclared hand-over, a commit that fails at
 * `turn.commit`), each perception gets exactly one of the two: its answer or one `failed`.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { openSse, type SseEvent } from "../../support/bridges/sse.ts";
import { withFaults } from "../../support/faults/faultArbitraries.ts";
import { failingSoul, THROWN, UNDECLARED } from "../../support/souls/failingSoul.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
const TOKEN = "http-failed-test-token-4c1d";
const auth = { Authorization: `Bearer ${TOKEN}` };
const logged: string[] = [];
let node: EnsoulNode;
let base: string;

beforeAll(async () => {
  const config = parseClusterConfig({
    cluster: "web",
    souls: [{ id: "fa", blueprint: failingSoul }],
    bridges: [{ type: "http", soul: "fa", options: { port: 0, rateLimit: { perMinute: 60_000, burst: 10_000 } } }],
    runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
  });
  node = await startNode({ config, data: dirs.make(), store: { noSync: true }, env: { ENSOUL_HTTP_TOKEN: TOKEN }, log: (line) => logged.push(line) });
  base = node.status().bridges![0]!.url!.replace(/\/v1\/souls\/fa\/$/, "");
});
afterAll(async () => {
  await node?.stop();
  dirs.cleanup();
});

async function post(content: string, key: string): Promise<string> {
  const res = await fetch(`${base}/v1/souls/fa/perceptions`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "application/json", "Idempotency-Key": key },
    body: JSON.stringify({ content, name: "Ada" }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

const about = (id: string) => (e: SseEvent) => (e.event === "final" || e.event === "failed") && (JSON.parse(e.data) as { perception: string }).perception === id;

describe("a failed turn on the HTTP bridge", () => {
  it("sends a failed event for the perception on SSE, with the reason and an id a reconnect resumes from, and logs it", async () => {
    const sse = await openSse(`${base}/v1/souls/fa/speech`, auth);
    const boom = await post("boom", "sse-boom");
    const bye = await post("bye", "sse-bye");
    const after = await post("still there?", "sse-after");
    await sse.until((es) => es.some(about(after)));
    sse.close();
    const ended = sse.events.filter((e) => e.event !== "ephemeral");
    expect(ended.map((e) => [e.event, JSON.parse(e.data)])).toEqual([
      ["failed", { perception: boom, reason: THROWN }],
      ["failed", { perception: bye, reason: UNDECLARED }],
      ["final", { id: expect.any(String), perception: after, text: "echo: still there?" }],
    ]);
    expect(Number(ended[0]!.id)).toBeGreaterThan(0);

    const resumed = await openSse(`${base}/v1/souls/fa/speech`, { ...auth, "Last-Event-ID": String(Number(ended[0]!.id) - 1) });
    const again = await resumed.until((es) => es.some(about(after)));
    resumed.close();
    expect(again.filter((e) => e.event !== "ephemeral")).toEqual(ended);

    expect(logged).toEqual(
      expect.arrayContaining([
        `bridge http-fa: soul fa could not answer http message ${boom} in channel http: ${THROWN}`,
        `bridge http-fa: soul fa could not answer http message ${bye} in channel http: ${UNDECLARED}`,
      ]),
    );
  });

  it("sends it on the WebSocket that sent the perception", async () => {
    const ws = new WebSocket(`${base.replace(/^http/, "ws")}/v1/souls/fa/ws`, { headers: auth });
    const frames: Record<string, unknown>[] = [];
    const failed = new Promise<Record<string, unknown>>((resolve) =>
      ws.on("message", (data) => {
        const frame = JSON.parse(data.toString()) as Record<string, unknown>;
        frames.push(frame);
        if (frame.type === "failed") resolve(frame);
      }),
    );
    await new Promise((resolve) => ws.once("open", resolve));
    ws.send(JSON.stringify({ type: "perception", content: "boom", name: "Ada", idempotencyKey: "ws-boom" }));
    const frame = await failed;
    ws.close();
    const accepted = frames.find((f) => f.type === "accepted");
    expect(frame).toEqual({ type: "failed", perception: accepted?.id, reason: THROWN });
  });

  it("property: each perception ends in its answer or in one failed event, never both, whatever its turn meets", async () => {
    const outcome = fc.constantFrom("answered", "thrown", "undeclared", "commit fails");
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(outcome, { minLength: 1, maxLength: 4 }), async (outcomes) => {
        run++;
        const keys = outcomes.map((_, i) => `p${run}-${i}`);
        // A commit that fails, for exactly the perceptions drawn so: matched by their ids (the Idempotency-Key's).
        const rules = outcomes.flatMap((o, i) => (o === "commit fails" ? [{ point: "turn.commit" as const, fault: { kind: "fail" as const }, match: { perceptionId: `http:fa:${keys[i]}` } }] : []));
        const sse = await openSse(`${base}/v1/souls/fa/speech`, auth);
        await withFaults(rules, async (plan) => {
          const ids: string[] = [];
          for (const [i, o] of outcomes.entries()) ids.push(await post(o === "thrown" ? "boom" : o === "undeclared" ? "bye" : `hello ${i}`, keys[i]!));
          await sse.until((es) => ids.every((id) => es.some(about(id))));
          await node.idle();
          expect(plan.injected("turn.commit")).toHaveLength(rules.length);
          for (const [i, id] of ids.entries()) {
            const ends = sse.events.filter(about(id)).map((e) => [e.event, JSON.parse(e.data) as Record<string, string>] as const);
            const expected = { answered: ["final", { text: `echo: hello ${i}` }], thrown: ["failed", { reason: THROWN }], undeclared: ["failed", { reason: UNDECLARED }], "commit fails": ["failed", { reason: "injected fault at turn.commit: failed before it landed" }] }[outcomes[i]!];
            expect(ends, `${outcomes[i]} ${id}`).toEqual([[expected[0], expect.objectContaining(expected[1])]]);
          }
        });
        sse.close();
      }),
      { numRuns: 8 },
    );
  });
});
