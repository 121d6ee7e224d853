/**
 * Request/reply latency over loopback. The raw NATS round trip (official client, no
 * envelope) is the floor; the Bus round trip (envelope encode + validate + decode on both
 * sides, through NatsBus) is reported as a ratio to it, so later changes to the bus can be
 * judged against what the wire itself costs. Sequential requests, one in flight at a time.
 */
import {
  clusterSubjects,
  connectNatsBus,
  createInProcessBus,
  decodeEnvelope,
  encodeEnvelope,
  makeEnvelope,
  type Bus,
} from "../../runtime/bus/index.ts";
import { INSTALL_HINT, natsAvailable, startNatsServer } from "../support/nats/natsServer.ts";
import { floorRows, latencyRows, timeEach, type BenchRow } from "./BenchRow.ts";
import { rawRequestFloor } from "./natsFloor.ts";

const WARMUP = 300;
const SAMPLES = 3_000;

/** A gate-shaped exchange: a proposal envelope out, a verdict envelope back, both validated. */
async function envelopeRoundTrips(bus: Bus): Promise<number[]> {
  const subject = clusterSubjects(bus.cluster).gateVerify("bench");
  bus.subscribe(
    subject,
    (m) => {
      const req = decodeEnvelope(m.data);
      if (!req.ok) throw new Error(req.reason);
      const verdict = makeEnvelope("verdict", "gate-bench", req.envelope.from, { verdict: "pass" }, { causation: req.envelope.id });
      m.respond(encodeEnvelope(verdict));
    },
    { queue: "bench" },
  );
  const proposal = { kind: "speak", content: "Hello there, how was the river today?" };
  return timeEach(
    async () => {
      const env = makeEnvelope("proposal", "soul-bench", "gate-bench", proposal);
      const reply = decodeEnvelope(await bus.request(subject, encodeEnvelope(env), { timeoutMs: 5_000 }));
      if (!reply.ok || reply.envelope.causation !== env.id) throw new Error("bad verdict");
    },
    { warmup: WARMUP, samples: SAMPLES },
  );
}

export async function run(): Promise<BenchRow[]> {
  if (!natsAvailable()) {
    return [{ name: `skipped: nats-server not found; ${INSTALL_HINT}`, value: Number.NaN, unit: "" }];
  }
  const server = await startNatsServer({ jetstream: true });
  try {
    const payload = encodeEnvelope(makeEnvelope("proposal", "soul-bench", "gate-bench", { kind: "speak", content: "Hello there, how was the river today?" }));
    const raw = await rawRequestFloor(server.url, payload, { warmup: WARMUP, samples: SAMPLES });

    const natsBus = await connectNatsBus({ servers: server.url, cluster: "bench" });
    const viaNats = await envelopeRoundTrips(natsBus);
    await natsBus.drain();

    const local = createInProcessBus({ cluster: "bench" });
    const viaLocal = await envelopeRoundTrips(local);
    await local.drain();

    return [
      ...floorRows("raw NATS request/reply", raw),
      ...latencyRows("NatsBus request/reply + envelopes", viaNats, raw),
      ...latencyRows("in-process bus request/reply + envelopes", viaLocal, raw),
    ];
  } finally {
    await server.dispose();
  }
}
