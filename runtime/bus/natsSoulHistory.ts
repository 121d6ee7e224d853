/**
 * Souls' replicated history on NATS (soulHistoryLog.ts): the stream `ENSOUL_<cluster>_HISTORY`,
 * subjects `ensoul.<cluster>.history.<soulId>`, file storage, no age or size limit (a record
 * is kept until its soul's owner compacts the history past it), the cluster config's
 * replicas. The fence is JetStream's `Nats-Expected-Last-Subject-Sequence`: the server stores
 * an append only if the soul's subject last had the sequence given (error 10071 otherwise).
 * Compaction is a purge of the soul's subject up to (not including) a snapshot's sequence.
 *
 * Reading uses a short-lived pull consumer with one `filter_subject` (nats-server 2.9 has no
 * `filter_subjects`), no acks, deleted after the read.
 *
 * A turn's record carries the soul's whole state, so it can outgrow the server's max_payload
 * (1 MiB by default), which no publish may exceed. Such a record is sent in parts, each fenced
 * on the one before (header `Ensoul-Part: <i>/<count>`; parts after the first also carry
 * `Ensoul-Record-Start`, the first part's sequence). The record's sequence is its last part's.
 * A reader joins the parts and drops a record whose parts do not all follow each other (a
 * writer fenced off or killed halfway: such a record was never acknowledged to anyone).
 */
import { AckPolicy, DeliverPolicy, StorageType, RetentionPolicy, DiscardPolicy, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { headers, nanos } from "@nats-io/transport-node";
import { atFaultPoint } from "../faults/index.ts";
import { isStreamNotFound, isWrongLastSequence } from "./jetStreamErrors.ts";
import { updateReplicas } from "./natsStream.ts";
import { streamName } from "./subjects.ts";
import { HistoryFencedError, HistoryRecordTooLargeError, historyStreamName, historySubject, historySubjects, MAX_HISTORY_RECORD_BYTES, type HistoryEntry, type SoulHistoryLog } from "./soulHistoryLog.ts";

/** A stored message's limit (the stream's max_msg_size): one part, or a record sent whole. */
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/** Room left in each part for its headers and the protocol line. */
const HEADER_ROOM = 4 * 1024;
const PART_HEADER = "Ensoul-Part";
const START_HEADER = "Ensoul-Record-Start";

export interface NatsSoulHistoryOptions {
  replicas?: number;
  /** The server's max_payload now (it can change with a reconnect to another server); default 1 MiB. */
  maxPayload?: () => number | undefined;
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
    async append(soulId, data, expectedLastSeq, options = {}) {
      await open();
      if (data.length > MAX_HISTORY_RECORD_BYTES) throw new HistoryRecordTooLargeError(soulId, data.length);
      const partBytes = Math.min(MAX_MESSAGE_BYTES, Math.max(64 * 1024, (opts.maxPayload?.() ?? 1024 * 1024) - HEADER_ROOM));
      const count = Math.max(1, Math.ceil(data.length / partBytes));
      const subject = historySubject(cluster, soulId);
      const { msgId, kind, n } = options;
      const point = kind === "claim" ? "history.claim" : "history.append";
      let last = expectedLastSeq;
      let start = 0;
      for (let i = 0; i < count; i++) {
        const part = count > 1 ? headers() : undefined;
        part?.set(PART_HEADER, `${i + 1}/${count}`);
        if (i > 0) part?.set(START_HEADER, String(start));
        // Each part under its own id, so an append sent again finds the parts that landed.
        const id = msgId === undefined ? undefined : count > 1 ? `${msgId}.${i + 1}` : msgId;
        const publish = () =>
          js.publish(subject, data.subarray(i * partBytes, (i + 1) * partBytes), {
            expect: { lastSubjectSequence: last },
            timeout: 10_000,
            ...(part ? { headers: part } : {}),
            ...(id !== undefined ? { msgID: id } : {}),
          });
        try {
          // One fault point per message published: `ackLost` there means it really is in the stream.
          const ack = await atFaultPoint(point, publish, { soulId, kind, n, part: i + 1, parts: count });
          if (i === 0) start = ack.seq;
          last = ack.seq;
        } catch (err) {
          if (isWrongLastSequence(err)) throw new HistoryFencedError(soulId, last);
          throw err;
        }
      }
      return last;
    },
    async read(soulId, afterSeq = 0) {
      await open();
      return joinParts(await readSubject(js, jsm, stream, historySubject(cluster, soulId), { afterSeq }));
    },
    streamSince: async (subject, sinceMs) => (await readSubject(js, jsm, streamName(cluster), subject, { since: sinceMs })).map(({ seq, data }) => ({ seq, data })),
    async purgeBefore(soulId, seq) {
      await open();
      // A record sent in parts begins at its first part: that one and those after it stay.
      const subject = historySubject(cluster, soulId);
      const [record] = await readSubject(js, jsm, stream, subject, { afterSeq: seq - 1, limit: 1 });
      const keepFrom = record?.seq === seq && record.start ? Number(record.start) : seq;
      const { purged } = await atFaultPoint("history.purge", () => jsm.streams.purge(stream, { filter: subject, seq: keepFrom }), { soulId, seq: keepFrom });
      return purged;
    },
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
      max_msg_size: MAX_MESSAGE_BYTES,
      num_replicas: replicas,
      description: "ensoul souls' replicated history (docs/STORAGE.md, Failover)",
    })
    .catch(async (err: unknown) => {
      // Two nodes creating it at once: the other one won, which is as good.
      if (!(err instanceof Error && /already in use|already exists/i.test(err.message))) throw err;
    });
}

/** A stored message as read, with the part headers of a record sent in parts. */
export interface StoredPart extends HistoryEntry {
  part?: string;
  start?: string;
}

async function readSubject(js: JetStreamClient, jsm: JetStreamManager, stream: string, subject: string, from: { afterSeq?: number; since?: number; limit?: number }): Promise<StoredPart[]> {
  const start =
    from.since !== undefined
      ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(from.since).toISOString() }
      : from.afterSeq
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from.afterSeq + 1 }
        : { deliver_policy: DeliverPolicy.All };
  const info = await jsm.consumers.add(stream, { filter_subject: subject, ack_policy: AckPolicy.None, inactive_threshold: nanos(30_000), ...start });
  const out: StoredPart[] = [];
  try {
    const wanted = (left: number) => Math.min(left, (from.limit ?? Number.POSITIVE_INFINITY) - out.length);
    let pending = wanted(info.num_pending);
    const consumer = await js.consumers.get(stream, info.name);
    while (pending > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(pending, 256), expires: 5_000 });
      let got = 0;
      for await (const m of batch) {
        const part = m.headers?.get(PART_HEADER);
        out.push({ seq: m.seq, data: m.data, ...(part ? { part, start: m.headers?.get(START_HEADER) ?? "" } : {}) });
        got += 1;
        pending = wanted(m.info.pending);
      }
      if (got > 0) continue;
      // Records purged meanwhile (a history compacted under the read) are no longer pending.
      pending = (await jsm.consumers.info(stream, info.name)).num_pending;
      if (pending > 0) throw new Error(`reading ${subject}: the server delivered nothing while ${pending} records were pending`);
    }
  } finally {
    await jsm.consumers.delete(stream, info.name).catch(() => undefined);
  }
  return out;
}

/**
 * Records from stored messages: one sent whole as it is; one sent in parts joined, under its
 * last part's sequence, when every part is there in order; parts that do not make a whole
 * record (a writer fenced off or killed halfway, or a purge that cut into one) left out.
 */
export function joinParts(stored: readonly StoredPart[]): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  let open: { start: number; count: number; chunks: Uint8Array[] } | undefined;
  for (const m of stored) {
    if (m.part === undefined) {
      open = undefined;
      out.push({ seq: m.seq, data: m.data });
      continue;
    }
    const [index, count] = m.part.split("/").map(Number) as [number, number];
    if (index === 1) open = { start: m.seq, count, chunks: [m.data] };
    else if (open && index === open.chunks.length + 1 && count === open.count && Number(m.start) === open.start) open.chunks.push(m.data);
    else {
      open = undefined;
      continue;
    }
    if (open.chunks.length === open.count) {
      out.push({ seq: m.seq, data: Buffer.concat(open.chunks) });
      open = undefined;
    }
  }
  return out;
}
