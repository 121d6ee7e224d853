/**
 * The floor the NATS benchmarks measure themselves against, in the same run: a raw
 * request/reply over loopback with the official client on a connection of its own (no
 * envelope, no stream, no disk), carrying the same bytes the measured path sends.
 */
import { connect } from "@nats-io/transport-node";
import { timeEach } from "./BenchRow.ts";

export async function rawRequestFloor(url: string, request: Uint8Array, o: { answer?: Uint8Array; warmup: number; samples: number }): Promise<number[]> {
  const nc = await connect({ servers: url });
  try {
    const answer = o.answer;
    nc.subscribe("bench.raw", { callback: (_err, m) => void m.respond(answer ?? m.data) });
    await nc.flush();
    return await timeEach(() => nc.request("bench.raw", request, { timeout: 5_000 }), o);
  } finally {
    await nc.drain();
  }
}
