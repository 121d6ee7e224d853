/**
 * Souls' replicated history on NATS (soulHistoryLog.ts): the stream `ENSOUL_<cluster>_HISTORY`,
 * subjects `ensoul.<cluster>.history.<soulId>`, file storage, no age or size limit (a record
 * is kept for as long as the stream is), the cluster config's
 * replicas. The fence is JetStream's `Nats-Expected-Last-Subject-Sequence`: the server stores
 * an append only if the soul's subject last had the sequence given (error 10071 otherwise).
 *
 * Reading uses a short-lived pull consumer with one `filter_subject` (nats-server 2.9 has no
 * `filter_subjects`), no acks, deleted after the read.
 */
import { AckPolicy, DeliverPolicy, StorageType, RetentionPolicy, DiscardPolicy, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { isStreamNotFound, isWrongLastSequence } from "./jetStreamErrors.ts";
import { updateReplicas } from "./natsStream.ts";
import { streamName } from "./subjects.ts";
import { HistoryFencedError, historyStreamName, historySubject, historySubjects, type HistoryEntry, type SoulHistoryLog } from "./soulHistoryLog.ts";

/** A record holds a turn's commit (working memory included): room for a large one. */
const MAX_RECORD_BYTES = 8 * 1024 * 1024;

export interface NatsSoulHistoryOptions {
  replicas?: number;
}

export function createNatsSoulHistory(js: JetStreamClient, jsm: JetStreamManager, cluster: string, opts: NatsSoulHistoryOptions = {}): SoulHistoryLog {
  const stream = historyStreamName(cluster);
  let ready: Promise<void> | undefined;
  const open = (): Promise<void> => {
    ready ??= ensureHistoryStream(jsm, stream, historySubjects(cluster), opts.replicas ?? 1).catch((err: unknown) => {
      ready = undefined;
      throw err;
    });
    return ready;
  };

  return {
    async append(soulId, data, expectedLastSeq, msgId) {
      await open();
      try {
        const ack = await js.publish(historySubject(cluster, soulId), data, { expect: { lastSubjectSequence: expectedLastSeq }, timeout: 10_000, ...(msgId !== undefined ? { msgID: msgId } : {}) });
        return ack.seq;
      } catch (err) {
        if (isWrongLastSequence(err)) throw new HistoryFencedError(soulId, expectedLastSeq);
        throw err;
      }
    },
    async read(soulId, afterSeq = 0) {
      await open();
      return readSubject(js, jsm, stream, historySubject(cluster, soulId), { afterSeq });
    },
    streamSince: (subject, sinceMs) => readSubject(js, jsm, streamName(cluster), subject, { since: sinceMs }),
  };
}

async function ensureHistoryStream(jsm: JetStreamManager, name: string, subject: string, replicas: number): Promise<void> {
  try {
    const info = await jsm.streams.info(name);
    if (info.config.num_replicas !== replicas) await updateReplicas(jsm, name, info.config.num_replicas, replicas);
    return;
  } catch (err) {
    if (!isStreamNotFound(err)) throw err;
  }
  await jsm.streams
    .add({
      name,
      subjects: [subject],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.New,
      max_msg_size: MAX_RECORD_BYTES,
      num_replicas: replicas,
      description: "ensoul souls' replicated history (docs/STORAGE.md, Failover)",
    })
    .catch(async (err: unknown) => {
      // Two nodes creating it at once: the other one won, which is as good.
      if (!(err instanceof Error && /already in use|already exists/i.test(err.message))) throw err;
    });
}

async function readSubject(js: JetStreamClient, jsm: JetStreamManager, stream: string, subject: string, from: { afterSeq?: number; since?: number }): Promise<HistoryEntry[]> {
  const start =
    from.since !== undefined
      ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(from.since).toISOString() }
      : from.afterSeq
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from.afterSeq + 1 }
        : { deliver_policy: DeliverPolicy.All };
  const info = await jsm.consumers.add(stream, { filter_subject: subject, ack_policy: AckPolicy.None, inactive_threshold: nanos(30_000), ...start });
  const out: HistoryEntry[] = [];
  try {
    let pending = info.num_pending;
    const consumer = await js.consumers.get(stream, info.name);
    while (pending > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(pending, 256), expires: 5_000 });
      let got = 0;
      for await (const m of batch) {
        out.push({ seq: m.seq, data: m.data });
        pending = m.info.pending;
        got += 1;
      }
      if (got === 0) throw new Error(`reading ${subject}: the server delivered nothing while ${pending} records were pending`);
    }
  } finally {
    await jsm.consumers.delete(stream, info.name).catch(() => undefined);
  }
  return out;
}
