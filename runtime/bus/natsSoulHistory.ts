/**
 * Souls' replicated history on NATS (soulHistoryLog.ts): the stream `ENSOUL_<cluster>_HISTORY`,
 * subjects `ensoul.<cluster>.history.<soulId>`, file storage, no age or size limit (a record
 * is kept until its soul's owner compacts the history past it), the cluster config's
 * replicas. The fence is JetStream's `Nats-Expected-Last-Subject-Sequence`: the server stores
 * an append only if the soul's subject last had the sequence given (error 10071 otherwise).
 * Compaction is a snapshot published with `Nats-Rollup: sub` (the stream allows rollups): once
 * stored, the server removes every earlier message on the soul's subject, in the same step and
 * under the same fence. A node needs only the right to publish on the soul's subject, never
 * the stream's purge API, whose one request could remove every soul's history.
 *
 * Reading uses a short-lived pull consumer with one `filter_subject` (nats-server 2.9 has no
 * `filter_subjects`), no acks, deleted after the read.
 *
 * A turn's record carries the soul's whole state, so it can outgrow the server's max_payload
 * (1 MiB by default), which no publish may exceed. Such a record is sent in parts, each fenced
 * on the one before (header `Ensoul-Part: <i>/<count>`; parts after the first also carry
 * `Ensoul-Record-Start`, the first part's sequence). The record's sequence is its last part's.
 * A reader joins the parts and drops a record whose parts do not all follow each other (a
 * writer fenced off or killed halfway: such a record was never acknowledged to anyone). A
 * compacting snapshot is never sent in parts: a rollup on its first part would leave the soul
 * with no whole record until the last one landed, and with none at all if its writer died then.
 */
import { AckPolicy, DeliverPolicy, StorageType, RetentionPolicy, DiscardPolicy, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { headers, nanos, type MsgHdrs } from "@nats-io/transport-node";
import { atFaultPoint } from "../faults/index.ts";
import { isStreamNotFound, isWrongLastSequence } from "./jetStreamErrors.ts";
import { updateReplicas } from "./natsStream.ts";
import { streamName } from "./subjects.ts";
import { assertHistoryRecordSize, HistoryCompactionTooLargeError, HistoryDuplicateError, HistoryFencedError, historyStreamName, historySubject, historySubjects, type HistoryEntry, type SoulHistoryLog } from "./soulHistoryLog.ts";

/** A stored message's limit (the stream's max_msg_size): one part, or a record sent whole. */
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/** Room left in each part for its headers and the protocol line. */
const HEADER_ROOM = 4 * 1024;
const PART_HEADER = "Ensoul-Part";
const START_HEADER = "Ensoul-Record-Start";
/** JetStream's per-subject rollup: the message replaces every earlier one on its subject. */
const ROLLUP_HEADER = "Nats-Rollup";
/** JetStream keeps a message's id in this header: how a record sent again is recognised past the duplicate window. */
const MSG_ID_HEADER = "Nats-Msg-Id";

export interface NatsSoulHistoryOptions {
  replicas?: number;
  /** Whether the connection is up now (a publish made while it is down waits out its whole timeout unanswered). */
  connected?: () => boolean;
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
  const first = async (subject: string, afterSeq: number) => (await readSubject(js, jsm, stream, subject, { afterSeq, limit: 1 }))[0];

  /**
   * Publishes one message fenced on `expected`; resolves with its sequence. The same message
   * sent before under its id (its acknowledgement lost) is recognised: by the duplicate window
   * while it lasts, checked to hold these very bytes; after it, as the message that follows
   * `expected`. Anything else there is another writer's: HistoryFencedError.
   */
  const publishOnce = async (soulId: string, m: OutgoingPart, expected: number): Promise<number> => {
    // A publish made while the connection is down is never answered: fail now, and let the caller try again.
    if (opts.connected && !opts.connected()) throw new Error(`soul '${soulId}': not connected to NATS, the record was not sent`);
    try {
      const ack = await js.publish(m.subject, m.bytes, { expect: { lastSubjectSequence: expected }, timeout: 10_000, ...(m.headers ? { headers: m.headers } : {}), ...(m.id !== undefined ? { msgID: m.id } : {}) });
      if (!ack.duplicate) return ack.seq;
      const stored = await first(m.subject, ack.seq - 1);
      // Gone: a later writer compacted the history past it, so this node is fenced off anyway.
      if (stored?.seq !== ack.seq) throw new HistoryFencedError(soulId, expected);
      if (!sameBytes(stored.data, m.bytes)) throw new HistoryDuplicateError(soulId, m.id ?? "", ack.seq);
      return ack.seq;
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
      const next = m.id === undefined ? undefined : await first(m.subject, expected);
      if (next?.msgId === undefined || next.msgId !== m.id) throw new HistoryFencedError(soulId, expected);
      if (!sameBytes(next.data, m.bytes)) throw new HistoryDuplicateError(soulId, m.id, next.seq);
      return next.seq;
    }
  };

  return {
    async append(soulId, data, expectedLastSeq, options = {}) {
      await open();
      assertHistoryRecordSize(soulId, data.length);
      const partBytes = Math.min(MAX_MESSAGE_BYTES, Math.max(64 * 1024, (opts.maxPayload?.() ?? 1024 * 1024) - HEADER_ROOM));
      const count = Math.max(1, Math.ceil(data.length / partBytes));
      const subject = historySubject(cluster, soulId);
      const { msgId, kind, n, compacts } = options;
      if (compacts && count > 1) throw new HistoryCompactionTooLargeError(soulId, data.length, partBytes);
      const point = compacts ? "history.purge" : kind === "claim" ? "history.claim" : "history.append";
      let last = expectedLastSeq;
      let start = 0;
      for (let i = 0; i < count; i++) {
        const part = count > 1 || compacts ? headers() : undefined;
        if (count > 1) part?.set(PART_HEADER, `${i + 1}/${count}`);
        if (i > 0) part?.set(START_HEADER, String(start));
        if (compacts) part?.set(ROLLUP_HEADER, "sub");
        // Each part under its own id, so an append sent again finds the parts that landed.
        const id = msgId === undefined ? undefined : count > 1 ? `${msgId}.${i + 1}` : msgId;
        const message: OutgoingPart = { subject, bytes: data.subarray(i * partBytes, (i + 1) * partBytes), ...(part ? { headers: part } : {}), ...(id !== undefined ? { id } : {}) };
        // One fault point per message published: `ackLost` there means it really is in the stream.
        const seq = await atFaultPoint(point, () => publishOnce(soulId, message, last), { soulId, kind, n, part: i + 1, parts: count });
        if (i === 0) start = seq;
        last = seq;
      }
      return last;
    },
    async read(soulId, afterSeq = 0) {
      await open();
      const stored = await readSubject(js, jsm, stream, historySubject(cluster, soulId), { afterSeq });
      return { entries: joinParts(stored), lastSeq: stored.at(-1)?.seq ?? afterSeq };
    },
    streamSince: async (subject, sinceMs) => (await readSubject(js, jsm, streamName(cluster), subject, { since: sinceMs })).map(({ seq, data }) => ({ seq, data })),
  };
}

async function ensureHistoryStream(jsm: JetStreamManager, name: string, subject: string, replicas: number): Promise<void> {
  try {
    const info = await jsm.streams.info(name);
    if (info.config.num_replicas !== replicas) await updateReplicas(jsm, name, info.config.num_replicas, replicas);
    // A stream made by an earlier version compacted with purges: compaction now needs rollups.
    if (!info.config.allow_rollup_hdrs) await jsm.streams.update(name, { allow_rollup_hdrs: true });
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
      allow_rollup_hdrs: true,
      description: "ensoul souls' replicated history (docs/STORAGE.md, Failover)",
    })
    .catch(async (err: unknown) => {
      // Two nodes creating it at once: the other one won, which is as good.
      if (!(err instanceof Error && /already in use|already exists/i.test(err.message))) throw err;
    });
}

/** A stored message as read, with the part headers of a record sent in parts and its id. */
export interface StoredPart extends HistoryEntry {
  part?: string;
  start?: string;
  msgId?: string;
}

/** One message of an append: a whole record, or one part of it. */
interface OutgoingPart {
  subject: string;
  bytes: Uint8Array;
  headers?: MsgHdrs;
  id?: string;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
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
        const msgId = m.headers?.get(MSG_ID_HEADER);
        out.push({ seq: m.seq, data: m.data, ...(part ? { part, start: m.headers?.get(START_HEADER) ?? "" } : {}), ...(msgId ? { msgId } : {}) });
        got += 1;
        pending = wanted(m.info.pending);
      }
      if (got > 0) continue;
      // Records removed meanwhile (a history compacted under the read) are no longer pending.
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
 * record (a writer fenced off or killed halfway) left out.
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
