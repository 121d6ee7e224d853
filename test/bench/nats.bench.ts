/**
 * Request/reply latency over loopback. The raw NATS round trip (official client, no
 * envelope) is the floor; the Bus round trip (envelope encode + validate + decode on both
 * sides, through NatsBus) is reported as a ratio to it, so later changes to the bus can be
 * judged against what the wire itself costs. Sequential requests, one in flight at a time.
 */
import { connect } from "@nats-io/transport-node";
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
import { percentile, type BenchRow } from "./BenchRow.ts";

const WARMUP = 300;
const SAMPLES = 3_000;

async function timeRequests(once: () => Promise<void>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await once();
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = process.hrtime.bigint();
    await once();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return samples;
}

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
  return timeRequests(async () => {
    const env = makeEnvelope("proposal", "soul-bench", "gate-bench", proposal);
    const reply = decodeEnvelope(await bus.request(subject, encodeEnvelope(env), { timeoutMs: 5_000 }));
    if (!reply.ok || reply.envelope.causation !== env.id) throw new Error("bad verdict");
  });
}

export async function run(): Promise<BenchRow[]> {
  if (!natsAvailable()) {
    return [{ name: `skipped: nats-server not found; ${INSTALL_HINT}`, value: Number.NaN, unit: "" }];
  }
  const server = await startNatsServer({ jetstream: true });
  try {
    const nc = await connect({ servers: server.url });
    const payload = encodeEnvelope(makeEnvelope("proposal", "soul-bench", "gate-bench", { kind: "speak", content: "Hello there, how was the river today?" }));
    nc.subscribe("bench.raw", { callback: (_err, m) => void m.respond(m.data) });
    await nc.flush();
    const raw = await timeRequests(async () => {
      await nc.request("bench.raw", payload, { timeout: 5_000 });
    });
    await nc.drain();

    const natsBus = await connectNatsBus({ servers: server.url, cluster: "bench" });
    const viaNats = await envelopeRoundTrips(natsBus);
    await natsBus.drain();

    const local = createInProcessBus({ cluster: "bench" });
    const viaLocal = await envelopeRoundTrips(local);
    await local.drain();

    const rawP50 = percentile(raw, 50);
    const rawP99 = percentile(raw, 99);
    return [
      { name: "raw NATS request/reply p50 (floor)", value: rawP50, unit: "ms" },
      { name: "raw NATS request/reply p99 (floor)", value: rawP99, unit: "ms" },
      { name: "NatsBus request/reply + envelopes p50", value: percentile(viaNats, 50), unit: "ms", ratio: percentile(viaNats, 50) / rawP50 },
      { name: "NatsBus request/reply + envelopes p99", value: percentile(viaNats, 99), unit: "ms", ratio: percentile(viaNats, 99) / rawP99 },
      { name: "in-process bus request/reply + envelopes p50", value: percentile(viaLocal, 50), unit: "ms", ratio: percentile(viaLocal, 50) / rawP50 },
      { name: "in-process bus request/reply + envelopes p99", value: percentile(viaLocal, 99), unit: "ms", ratio: percentile(viaLocal, 99) / rawP99 },
    ];
  } finally {
    await server.dispose();
  }
}
