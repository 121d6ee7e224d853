/**
 * Streaming with the gates closed, end to end: a gated soul streams its answer token by
 * token; the HTTP bridge's speech stream shows only pieces the gate chain passed. When the
 * bouncer intercepts a secret in the second sentence, nothing past the first sentence is
 * ever shown and no final comes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineSoul, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { openSse } from "../../support/bridges/sse.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());
const TOKEN = "gated-stream-token";
const auth = { Authorization: `Bearer ${TOKEN}` };

/** Streams the perceived text back a word every few ms, as a model would. */
const streamer: MentalProcess = async ({ workingMemory }) => {
  const words = usePerceptions().invokingPerception.content.split(/(?<= )/);
  async function* tokens() {
    for (const w of words) {
      await new Promise((r) => setTimeout(r, 3));
      yield w;
    }
  }
  useActions().speak(tokens());
  return workingMemory;
};
const blueprint = defineSoul({ name: "Streamer", persona: "Says what it hears, as a stream.", initialProcess: streamer, processes: { streamer } });

describe("a gated soul streaming through the HTTP bridge", () => {
  let node: EnsoulNode;
  let base: string;
  beforeAll(async () => {
    node = await startNode({
      config: parseClusterConfig({
        cluster: "gated",
        souls: [{ id: "stream", blueprint }],
        gates: [{ builtin: "bouncer", souls: ["stream"], options: { vault: ["swordfish-7731"] } }],
        bridges: [{ type: "http", soul: "stream", options: { port: 0 } }],
        runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
      }),
      data: dirs.make(),
      store: { noSync: true },
      env: { ENSOUL_HTTP_TOKEN: TOKEN },
      log: () => undefined,
    });
    base = (node.status().bridges?.[0]?.url as string).replace(/\/v1\/souls\/stream\/$/, "");
  });
  afterAll(async () => {
    await node?.stop();
  });

  const say = async (content: string) => {
    const res = await fetch(`${base}/v1/souls/stream/perceptions`, { method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: JSON.stringify({ content, name: "Ada" }) });
    return ((await res.json()) as { id: string }).id;
  };
  const of = (events: { event: string; data: string }[], id: string, kind: string) => events.filter((e) => e.event === kind && JSON.parse(e.data).perception === id).map((e) => JSON.parse(e.data).text as string);

  it("shows verified sentences as chunks, then the final", async () => {
    const sse = await openSse(`${base}/v1/souls/stream/speech`, auth);
    const id = await say("First sentence here. Second one follows! And a third");
    const events = await sse.until((es) => of(es, id, "final").length > 0);
    sse.close();
    expect(of(events, id, "chunk")).toEqual(["First sentence here. ", "Second one follows! "]);
    expect(of(events, id, "final")).toEqual(["First sentence here. Second one follows! And a third"]);
  });

  it("stops at the last verified piece when the bouncer intercepts: the secret never shows, and no final comes", async () => {
    const sse = await openSse(`${base}/v1/souls/stream/speech`, auth);
    const id = await say("All is well. The vault code is swordfish-7731 of course. More after that.");
    // A later perception's final marks that the first one is over.
    const marker = await say("Done now.");
    const events = await sse.until((es) => of(es, marker, "final").length > 0);
    sse.close();
    expect(of(events, id, "chunk")).toEqual(["All is well. "]);
    expect(of(events, id, "final")).toEqual([]);
    expect(JSON.stringify(events)).not.toContain("swordfish");
  });
});
