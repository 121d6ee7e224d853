/**
 * A node's perceptions on NATS: its own connection pulling from its durable consumer, the
 * messages handed to the lanes (perceptionLanes.ts) that keep each soul's order while many are
 * in flight. perceptionSources.ts says why the node pulls itself rather than use the bus.
 */
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages } from "@nats-io/jetstream";
import { connect, nanos, type NatsConnection } from "@nats-io/transport-node";
import { PULL_EXPIRES_MS } from "../bus/index.ts";
import { natsConnectionOptions, type NatsConnectOptions } from "./natsConnection.ts";
import { PerceptionLanes, type LaneOptions } from "./perceptionLanes.ts";
import type { PerceptionSource } from "./perceptionSources.ts";

export interface JetStreamSourceOptions extends LaneOptions {
  nats: NatsConnectOptions;
  /** `ENSOUL_<cluster>`; the bus has created it. */
  stream: string;
  /** Connection name shown by the server. */
  name: string;
}

export async function jetStreamPerceptionSource(o: JetStreamSourceOptions): Promise<PerceptionSource> {
  const nc: NatsConnection = await connect(natsConnectionOptions(o.nats, o.name));
  let messages: ConsumerMessages;
  try {
    const jsm = await jetstreamManager(nc);
    await ensureConsumer(jsm, o.stream, o.consumer, o.filter, o.ackWaitMs, o.maxInFlight);
    const consumer = await jetstream(nc).consumers.get(o.stream, o.consumer);
    // Short pulls (natsStream.ts PULL_EXPIRES_MS): a pull lost when the stream's leader moves is
    // noticed after two missed heartbeats of half of it, not the client's default 30 s.
    messages = await consumer.consume({ max_messages: Math.min(1_000, Math.max(64, o.maxInFlight)), expires: PULL_EXPIRES_MS });
  } catch (err) {
    await nc.close();
    throw err;
  }
  const lanes = new PerceptionLanes(o);

  const closed = (async () => {
    try {
      for await (const m of messages) {
        // Pulled after stop was asked for: hand it straight back, for the next start (or another instance).
        if (lanes.isStopping) {
          try {
            m.nak();
          } catch {
            // the connection is gone: the server redelivers after ack_wait
          }
          continue;
        }
        await lanes.slot();
        lanes.dispatch(m);
      }
    } catch (err) {
      if (!lanes.isStopping) o.report(err, `consumer ${o.consumer}`);
    }
    await lanes.drained();
    if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
  })();

  return {
    closed,
    async stop() {
      lanes.stop();
      await messages.close();
      await closed;
    },
  };
}

/**
 * Creates the node's consumer, or checks and updates an existing one.
 *
 * A consumer with deliveries still unacked belongs to a node process that died (startNode
 * has checked that no other process runs as this node). Left alone, JetStream would deliver
 * what was published since at once and hand back the dead process's messages only when their
 * ack_wait runs out, so a soul could perceive a later perception before an earlier one. So
 * the consumer is recreated to start again right after its ack floor: everything not yet
 * acked comes back in stream order. Messages after the floor that were acked out of order
 * come back too; the inbox recognises them (a redelivery is a no-op), though a bad one is
 * dead-lettered a second time.
 */
async function ensureConsumer(
  jsm: Awaited<ReturnType<typeof jetstreamManager>>,
  stream: string,
  name: string,
  filter: string,
  ackWaitMs: number,
  maxInFlight: number,
): Promise<void> {
  const maxAckPending = Math.max(1_000, maxInFlight * 4);
  const config = {
    durable_name: name,
    filter_subject: filter,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(ackWaitMs),
    max_ack_pending: maxAckPending,
    // Our own count decides when to dead-letter; the server keeps redelivering until then.
    max_deliver: -1,
  };
  let info;
  try {
    info = await jsm.consumers.info(stream, name);
  } catch (err) {
    if (!(err instanceof Error && (err.name === "ConsumerNotFoundError" || /consumer not found/i.test(err.message)))) throw err;
    await jsm.consumers.add(stream, { ...config, deliver_policy: DeliverPolicy.All });
    return;
  }
  if (info.config.filter_subject !== filter) {
    throw new Error(`durable consumer ${name} already exists with filter ${info.config.filter_subject ?? "(none)"}, not ${filter}`);
  }
  if (info.num_ack_pending > 0) {
    await jsm.consumers.delete(stream, name);
    await jsm.consumers.add(stream, { ...config, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: info.ack_floor.stream_seq + 1 });
    return;
  }
  if (info.config.ack_wait !== nanos(ackWaitMs) || (info.config.max_ack_pending ?? 0) < maxAckPending) {
    await jsm.consumers.update(stream, name, { ack_wait: nanos(ackWaitMs), max_ack_pending: maxAckPending });
  }
}
