/**
 * The cost of a remote tool call against the wire it runs on: the raw NATS request/reply
 * round trip (official client, the same bytes a tool call sends) is the floor, measured in the
 * same run; a tool actor call (remoteTool → serveToolActor: msgpack bodies, zod checks on both
 * sides, the tool's timeout) and a whole gated call as a turn makes it (TurnToolBox: input
 * schema, a proposal through a one-gate chain, events, the remote call) are ratios to it.
 * Sequential calls, one in flight at a time.
 */
import { connect } from "@nats-io/transport-node";
import { z } from "zod";
import { createGateChain, gatedOutlet } from "../../actors/gate/index.ts";
import { createInProcessOutlet } from "../../actors/vocabulary/index.ts";
import { createToolRegistry, defineTool, encodeToolBody, ledgerOf, remoteTool, serveToolActor, TurnToolBox } from "../../actors/tool/index.ts";
import { connectNatsBus } from "../../runtime/bus/index.ts";
import { INSTALL_HINT, natsAvailable, startNatsServer } from "../support/nats/natsServer.ts";
import { percentile, type BenchRow } from "./BenchRow.ts";

const WARMUP = 300;
const SAMPLES = 3_000;

async function time(once: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await once();
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = process.hrtime.bigint();
    await once();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return samples;
}

const input = { city: "Oslo", days: 3 };
const weather = defineTool({ name: "weather", description: "forecast", idempotent: true, input: z.object({ city: z.string(), days: z.number() }), run: ({ city, days }) => ({ city, days, sky: "grey" }) });

export async function run(): Promise<BenchRow[]> {
  if (!natsAvailable()) return [{ name: `skipped: nats-server not found; ${INSTALL_HINT}`, value: Number.NaN, unit: "" }];
  const server = await startNatsServer({});
  try {
    const nc = await connect({ servers: server.url });
    const request = encodeToolBody({ v: 1, callId: "s:1:tool:0", soulId: "s", tool: "weather", input, timeoutMs: 5_000 });
    const answer = encodeToolBody({ v: 1, ok: true, value: { city: "Oslo", days: 3, sky: "grey" } });
    nc.subscribe("bench.raw", { callback: (_err, m) => void m.respond(answer) });
    await nc.flush();
    const raw = await time(() => nc.request("bench.raw", request, { timeout: 5_000 }));
    await nc.drain();

    const toolNode = await connectNatsBus({ servers: server.url, cluster: "bench", name: "tool-node" });
    const soulNode = await connectNatsBus({ servers: server.url, cluster: "bench", name: "soul-node" });
    const actor = serveToolActor(toolNode, "bench", weather);
    await actor.ready();
    const remote = remoteTool({ bus: soulNode, cluster: "bench", name: "weather", idempotent: true, timeoutMs: 5_000 });
    const signal = new AbortController().signal;
    const viaActor = await time(() => remote.run(input, { callId: "s:1:tool:0", soulId: "s", signal }));

    const outlet = gatedOutlet(createInProcessOutlet(), createGateChain([{ name: "pass", priority: 1, verify: (p) => p }]));
    let turn = 0;
    const gated = await time(() => {
      const box = new TurnToolBox(createToolRegistry([remote]), {
        soulId: "s",
        turnId: `s:${++turn}`,
        turnKey: {},
        now: Date.now,
        review: (p) => outlet.review(p),
        emit: () => undefined,
        ledger: ledgerOf({}),
      });
      return box.invoke("weather", input);
    });
    await actor.stop();
    await soulNode.drain();
    await toolNode.drain();

    const floor = percentile(raw, 50);
    const floor99 = percentile(raw, 99);
    return [
      { name: "raw NATS request/reply p50 (floor)", value: floor, unit: "ms" },
      { name: "raw NATS request/reply p99 (floor)", value: floor99, unit: "ms" },
      { name: "remote tool call (tool actor) p50", value: percentile(viaActor, 50), unit: "ms", ratio: percentile(viaActor, 50) / floor },
      { name: "remote tool call (tool actor) p99", value: percentile(viaActor, 99), unit: "ms", ratio: percentile(viaActor, 99) / floor99 },
      { name: "gated remote tool call (TurnToolBox) p50", value: percentile(gated, 50), unit: "ms", ratio: percentile(gated, 50) / floor },
      { name: "gated remote tool call (TurnToolBox) p99", value: percentile(gated, 99), unit: "ms", ratio: percentile(gated, 99) / floor99 },
    ];
  } finally {
    await server.dispose();
  }
}
