/**
 * Bridges, against the local fake Slack (Socket Mode, the real @slack/bolt): a gated soul
 * streaming its answer a token every 15 ms, and what a person on Slack sees.
 *
 * - first visible text after the end of the first sentence: the gates release a piece at a
 *   sentence end, so the first post can come no sooner; the target is within 50 ms of it;
 * - the same from the first token, for scale;
 * - the bridge's own overhead, p50: the platform event until its perception is on the bus,
 *   and the soul's first streamed piece on the bus until the platform has the post.
 *
 * Everything runs in this process, so all times come from one clock (Date.now, as the fake
 * stamps its calls).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSoul, usePerceptions, useActions, type MentalProcess } from "../../actors/soul/index.ts";
import { decodeEnvelope, isKind } from "../../runtime/bus/index.ts";
import { parseClusterConfig, startNode } from "../../runtime/node/index.ts";
import { startFakeSlack } from "../support/fakes/slack/index.ts";
import { percentile, type BenchRow } from "./BenchRow.ts";

const TOKENS = ["Hello", " there", ", friend", ".", " How", " are", " you", " today", "?"];
const TOKEN_MS = 15;
const WARMUP = 3;
const SAMPLES = 20;

/** When the soul produced what, per sample (the sample's number is in the perception's text). */
const produced = new Map<number, { firstToken: number; sentenceEnd: number }>();

const streamer: MentalProcess = async ({ workingMemory }) => {
  const n = Number(/go (\d+)/.exec(usePerceptions().invokingPerception.content)?.[1] ?? -1);
  const marks = { firstToken: 0, sentenceEnd: 0 };
  produced.set(n, marks);
  async function* tokens() {
    for (const [i, token] of TOKENS.entries()) {
      await new Promise((r) => setTimeout(r, TOKEN_MS));
      if (i === 0) marks.firstToken = Date.now();
      if (token === ".") marks.sentenceEnd = Date.now();
      yield token;
    }
  }
  useActions().speak(tokens());
  return workingMemory;
};
const blueprint = defineSoul({ name: "Streamer", persona: "Streams its answers.", initialProcess: streamer, processes: { streamer } });

export async function run(): Promise<BenchRow[]> {
  const data = mkdtempSync(join(tmpdir(), "ensoul-bench-bridges-"));
  const slack = await startFakeSlack();
  const node = await startNode({
    config: parseClusterConfig({
      cluster: "benchbridges",
      souls: [{ id: "streamer", blueprint }],
      gates: [{ builtin: "bouncer", souls: ["streamer"], options: { vault: ["swordfish-7731"] } }],
      bridges: [{ type: "slack", soul: "streamer", options: { mode: "socket" } }],
      runtime: { heartbeatMs: 1_000, passivateAfterMs: 0 },
    }),
    data,
    store: { noSync: true },
    env: { SLACK_BOT_TOKEN: "xoxb-test", SLACK_APP_TOKEN: "xapp-test", SLACK_API_URL: slack.apiUrl },
    log: () => undefined,
  });
  const published = new Map<string, number>();
  const firstPiece = new Map<string, number>();
  const subs = [
    node.bus.subscribe(node.subjects.perceive("streamer"), (m) => {
      const d = decodeEnvelope(m.data);
      if (d.ok) published.set(d.envelope.id, Date.now());
    }),
    node.bus.subscribe(node.subjects.says("streamer"), (m) => {
      const d = decodeEnvelope(m.data);
      if (d.ok && isKind(d.envelope, "speech") && d.envelope.causation && !firstPiece.has(d.envelope.causation)) firstPiece.set(d.envelope.causation, Date.now());
    }),
  ];
  const afterSentence: number[] = [];
  const afterFirstToken: number[] = [];
  const eventToPerception: number[] = [];
  const pieceToPost: number[] = [];
  try {
    await slack.waitFor(() => node.status().bridges?.[0]?.state === "online", 10_000);
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const event = slack.appMention({ channel: "C1", user: "U1", text: `go ${i}` });
      const sent = Date.now();
      await slack.sendEvent(event);
      const post = await slack.waitFor((s) => s.calls("chat.postMessage").find((c) => c.ok && c.args["thread_ts"] === event.ts), 10_000);
      await slack.waitFor((s) => s.messages("C1").find((m) => m.thread_ts === event.ts && m.text.endsWith("?")), 10_000);
      if (i < WARMUP) continue;
      const marks = produced.get(i);
      const perception = [...published.keys()].find((id) => id.endsWith(`:${event.ts}`));
      if (!marks || !perception) throw new Error(`sample ${i}: no marks or perception`);
      afterSentence.push(post.time - marks.sentenceEnd);
      afterFirstToken.push(post.time - marks.firstToken);
      eventToPerception.push((published.get(perception) as number) - sent);
      pieceToPost.push(post.time - (firstPiece.get(perception) as number));
    }
  } finally {
    for (const s of subs) s.unsubscribe();
    await node.stop();
    await slack.close();
    rmSync(data, { recursive: true, force: true });
  }
  const p50 = (xs: number[]) => percentile(xs, 50);
  return [
    { name: "first text on Slack after the first sentence ends, gates on, p50", value: p50(afterSentence), unit: "ms", target: "≤ 50 ms", met: p50(afterSentence) <= 50 },
    { name: "the same, p95", value: percentile(afterSentence, 95), unit: "ms" },
    { name: "first text on Slack after the model's first token, p50", value: p50(afterFirstToken), unit: "ms" },
    { name: "bridge overhead: Slack event → perception on the bus, p50", value: p50(eventToPerception), unit: "ms" },
    { name: "bridge overhead: first verified piece on the bus → Slack post, p50", value: p50(pieceToPost), unit: "ms" },
  ];
}
