/**
 * The shared key-value state on NATS (sharedKv.ts): the JetStream key-value bucket
 * `ensoul_<cluster>_shared` (stream `KV_ensoul_<cluster>_shared`, subjects
 * `$KV.ensoul_<cluster>_shared.<context>.<key>`), through the official @nats-io/kv client, on
 * the bus's own connection. Values are UTF-8 JSON, so the `nats kv` command and a client in any
 * language read and write the same entries (docs/PROTOCOL.md, "Shared context").
 *
 * Compare-and-set is JetStream's `Nats-Expected-Last-Subject-Sequence`: the server stores the
 * write only if the key's last revision is the one given, and answers error 10071 otherwise.
 * The bucket is opened (created if missing, idempotently) on first use, so a node that never
 * touches shared context never asks JetStream for it.
 */
import { DeliverPolicy, StorageType, type JetStreamClient } from "@nats-io/jetstream";
import { headers } from "@nats-io/transport-node";
import { isWrongLastSequence } from "./jetStreamErrors.ts";
import { Kvm, type KV, type KvEntry } from "@nats-io/kv";
import { updateReplicas } from "./natsStream.ts";
import { decodeSharedValue, encodeSharedValue, sharedBucketName, sharedKey, SharedConflictError, SHARED_VALUE_MAX_BYTES, type JsonValue, type SharedChangeListener, type SharedEntry, type SharedKv } from "./sharedKv.ts";

export interface NatsSharedKvOptions {
  /**
   * Replicas of the bucket's stream (1..5; raise on a clustered NATS). Given, an existing
   * bucket with another count is updated to it; undefined: created with 1, an existing one left alone.
   */
  replicas?: number;
  /** Storage when it is created (default file). */
  storage?: "file" | "memory";
}


export function createNatsSharedKv(js: JetStreamClient, cluster: string, opts: NatsSharedKvOptions = {}): SharedKv {
  return new NatsSharedKv(js, sharedBucketName(cluster), opts);
}

class NatsSharedKv implements SharedKv {
  readonly #js: JetStreamClient;
  readonly #opts: NatsSharedKvOptions;
  #kv: Promise<KV> | undefined;

  constructor(
    js: JetStreamClient,
    readonly bucket: string,
    opts: NatsSharedKvOptions,
  ) {
    this.#js = js;
    this.#opts = opts;
  }

  /** The bucket, created on first use; a failed open is tried again at the next call. */
  #open(): Promise<KV> {
    if (!this.#kv) {
      const replicas = this.#opts.replicas;
      this.#kv = new Kvm(this.#js)
        .create(this.bucket, {
          history: 1,
          replicas: replicas ?? 1,
          storage: this.#opts.storage === "memory" ? StorageType.Memory : StorageType.File,
          // Headroom for the JSON, which sharedKv.ts keeps under SHARED_VALUE_MAX_BYTES.
          maxValueSize: SHARED_VALUE_MAX_BYTES + 1024,
          description: "ensoul shared contexts (docs/PROTOCOL.md, Shared context)",
        })
        .then(async (kv) => {
          // create() opens an existing bucket as it is: bring its replica count to the configured one.
          if (replicas !== undefined) {
            const have = (await kv.status()).replicas;
            if (have !== replicas) await updateReplicas(await this.#js.jetstreamManager(), `KV_${this.bucket}`, have, replicas);
          }
          return kv;
        });
      this.#kv.catch(() => (this.#kv = undefined));
    }
    return this.#kv;
  }

  async get(context: string, key: string): Promise<SharedEntry | undefined> {
    const full = sharedKey(context, key);
    const entry = await (await this.#open()).get(full);
    return entry ? entryOf(key, entry) : undefined;
  }

  async entries(context: string): Promise<SharedEntry[]> {
    const kv = await this.#open();
    const found: SharedEntry[] = [];
    const keys: string[] = [];
    for await (const k of await kv.keys(`${sharedKey(context, "x").slice(0, -1)}>`)) keys.push(k);
    for (const k of keys) {
      const entry = await kv.get(k);
      if (entry && entry.operation === "PUT") found.push(entryOf(k.slice(context.length + 1), entry));
    }
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async swap(context: string, key: string, value: JsonValue | undefined, revision: number): Promise<number> {
    const full = sharedKey(context, key);
    const bytes = value === undefined ? undefined : encodeSharedValue(context, key, value);
    const kv = await this.#open();
    try {
      if (bytes !== undefined) return await kv.put(full, bytes, { previousSeq: revision });
      // Deleting what was never written writes nothing (the client would write an unconditional marker for 0).
      if (revision === 0) {
        if ((await kv.get(full)) !== null) throw new SharedConflictError(context, key, revision);
        return 0;
      }
      // A delete marker published here rather than with kv.delete(), which does not say the marker's revision.
      const marker = headers();
      marker.set("KV-Operation", "DEL");
      const ack = await this.#js.publish(`$KV.${this.bucket}.${full}`, new Uint8Array(0), { headers: marker, expect: { lastSubjectSequence: revision } });
      return ack.seq;
    } catch (err) {
      if (isWrongLastSequence(err)) throw new SharedConflictError(context, key, revision);
      throw err;
    }
  }

  /**
   * An ordered push consumer of the context's keys, delivering new writes only, as a KV watch
   * is, but deleted on the server when the watch stops: left to its inactivity threshold (five
   * minutes in the client), every watch a process ever stopped would linger that long.
   */
  async watch(context: string, listener: SharedChangeListener): Promise<() => void> {
    await this.#open();
    const prefix = `$KV.${this.bucket}.`;
    const consumer = await this.#js.consumers.getPushConsumer(`KV_${this.bucket}`, {
      filter_subjects: `${prefix}${sharedKey(context, "x").slice(0, -1)}>`,
      deliver_policy: DeliverPolicy.New,
    });
    const updates = await consumer.consume();
    void (async () => {
      for await (const m of updates) {
        try {
          const operation = m.headers?.get("KV-Operation");
          const key = m.subject.slice(prefix.length + context.length + 1);
          listener({ key, value: operation === "DEL" || operation === "PURGE" ? undefined : decodeSharedValue(m.data, `shared key ${m.subject.slice(prefix.length)}`), revision: m.seq });
        } catch {
          // a listener's own failure, or a foreign value that is not JSON (get() says so): the watch goes on
        }
      }
    })().catch(() => undefined);
    return () => {
      updates.stop();
      // Nothing waits for it: a consumer the server cannot delete now goes after its inactivity threshold.
      consumer.delete().catch(() => undefined);
    };
  }
}

function entryOf(key: string, e: KvEntry): SharedEntry {
  return { key, value: e.operation === "PUT" ? decodeSharedValue(e.value, `shared key ${e.key}`) : undefined, revision: e.revision };
}
