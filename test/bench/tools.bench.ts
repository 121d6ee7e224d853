/**
 * The cost of a remote tool call against the wire it runs on: the raw NATS request/reply
 * round trip (official client, the same bytes a tool call sends) is the floor, measured in the
 * same run; a tool actor call (remoteTool → serveToolActor: msgpack bodies, zod checks on both
 * sides, the tool's timeout) and a whole gated call as a turn makes it (TurnToolBox: input
 * schema, a proposal through a one-gate chain, events, the remote call) are ratios to it.
 * Sequential calls, one in flight at a time.
 */
import { z } from "zod";
import { createGateChain, gatedOutlet } from "../../actors/gate/index.ts";
import { createInProcessOutlet } from "../../actors/vocabulary/index.ts";
import { createToolRegistry, defineTool, encodeToolBody, ledgerOf, remoteTool, serveToolActor, TurnToolBox } from "../../actors/tool/index.ts";
import { connectNatsBus } from "../../runtime/bus/index.ts";
import { INSTALL_HINT, natsAvailable, startNatsServer } from "../support/nats/natsServer.ts";
import { floorRows, latencyRows, timeEach, type BenchRow } from "./BenchRow.ts";
import { rawRequestFloor } from "./natsFloor.ts";

const WARMUP = 300;
const SAMPLES = 3_000;

const time = (once: () => Promise<unknown>) => timeEach(once, { warmup: WARMUP, samples: SAMPLES });

const input = { city: "Oslo", days: 3 };
const weather = defineTool({ name: "weather", description: "forecast", idempotent: true, input: z.object({ city: z.string(), days: z.number() }), run: ({ city, days }) => ({ city, days, sky: "grey" }) });

export async function run(): Promise<BenchRow[]> {
  if (!natsAvailable()) return [{ name: `skipped: nats-server not found; ${INSTALL_HINT}`, value: Number.NaN, unit: "" }];
  const server = await startNatsServer({});
  try {
    const request = encodeToolBody({ v: 1, callId: "s:1:tool:0", soulId: "s", tool: "weather", input, timeoutMs: 5_000 });
    const answer = encodeToolBody({ v: 1, ok: true, value: { city: "Oslo", days: 3, sky: "grey" } });
    const raw = await rawRequestFloor(server.url, request, { answer, warmup: WARMUP, samples: SAMPLES });

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

    return [...floorRows("raw NATS request/reply", raw), ...latencyRows("remote tool call (tool actor)", viaActor, raw), ...latencyRows("gated remote tool call (TurnToolBox)", gated, raw)];
  } finally {
    await server.dispose();
  }
}
