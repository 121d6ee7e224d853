/**
 * Leases on NATS (leases.ts): two JetStream key-value buckets through @nats-io/kv. Values are
 * UTF-8 JSON (`{"node":…,"instance":…}` for a node, `{"node":…}` for a soul), so any client
 * can read who owns what. The node bucket's max age is the lease's time to live: a node that
 * stops renewing has its key removed by the server.
 */
import { StorageType, type JetStreamClient } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { Kvm, type KV } from "@nats-io/kv";
import { atFaultPoint } from "../faults/index.ts";
import { isWrongLastSequence } from "./jetStreamErrors.ts";
import { LeaseHeldError, nodeLeaseBucket, soulLeaseBucket, type LeaseStore, type NodeLease } from "./leases.ts";
import { updateReplicas } from "./natsStream.ts";

export interface NatsLeaseOptions {
  /** A node's lease lapses this long after its last renewal (the same for every node of a cluster: it is the bucket's max age). */
  ttlMs: number;
  /** Copies of each bucket (`runtime.replicas`); an existing bucket with another count is brought to it. Undefined: 1 for a new bucket, an existing one left alone. */
  replicas?: number;
  /** Tests use it to renew faster; default ttl / 3. */
  renewEveryMs?: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const json = (v: unknown) => encoder.encode(JSON.stringify(v));
function parse(bytes: Uint8Array): { node?: unknown; instance?: unknown } {
  try {
    const v = JSON.parse(decoder.decode(bytes)) as unknown;
    return typeof v === "object" && v !== null ? (v as { node?: unknown; instance?: unknown }) : {};
  } catch {
    return {};
  }
}

export function createNatsLeases(js: JetStreamClient, cluster: string, o: NatsLeaseOptions): LeaseStore {
  const kvm = new Kvm(js);
  const replicas = o.replicas ?? 1;
  let nodes: Promise<KV> | undefined;
  let souls: Promise<KV> | undefined;
  const open = (bucket: string, ttlMs: number | undefined, description: string) =>
    kvm.create(bucket, { history: 1, ...(ttlMs !== undefined ? { ttl: ttlMs } : {}), replicas, storage: StorageType.File, description }).then((kv) => reconcile(js, kv, bucket, ttlMs, o.replicas));
  const nodeKv = () => (nodes ??= open(nodeLeaseBucket(cluster), o.ttlMs, "ensoul node liveness leases"));
  const soulKv = () => (souls ??= open(soulLeaseBucket(cluster), undefined, "ensoul soul owners"));

  const nodeAlive = async (nodeId: string) => {
    const e = await (await nodeKv()).get(nodeId);
    return e !== null && e.operation === "PUT";
  };

  return {
    nodeAlive,
    async liveNodes() {
      // The bucket's subjects from its stream's info: one request, where a key listing would
      // run a consumer (which stalled on a starved machine). A released lease leaves a delete
      // marker on its subject, so each is read; a lapsed one has no message left at all.
      const kv = await nodeKv();
      const bucket = nodeLeaseBucket(cluster);
      const info = await (await js.jetstreamManager()).streams.info(`KV_${bucket}`, { subjects_filter: `$KV.${bucket}.>` });
      const keys = Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(`$KV.${bucket}.`.length));
      const live = await Promise.all(keys.map(async (k) => ((await kv.get(k))?.operation === "PUT" ? k : undefined)));
      return live.filter((k): k is string => k !== undefined).sort();
    },
    async holdNode(nodeId, instance, waiting) {
      const kv = await nodeKv();
      const value = json({ node: nodeId, instance });
      let told = false;
      let epoch = 0;
      for (;;) {
        const e = await kv.get(nodeId);
        try {
          const take = { lease: "node", nodeId, op: "take" } as const;
          if (e === null || e.operation !== "PUT") epoch = await atFaultPoint("lease.renew", () => kv.create(nodeId, value), take);
          else if (parse(e.value).instance === instance) epoch = await atFaultPoint("lease.renew", () => kv.update(nodeId, value, e.revision), take);
        } catch (err) {
          if (!isWrongLastSequence(err) && !/exists/i.test(String((err as Error).message))) throw err;
        }
        if (epoch > 0) break;
        if (!told && e !== null) (told = true), waiting?.(String(parse(e.value).instance ?? "another process"));
        await new Promise((r) => setTimeout(r, Math.max(50, o.ttlMs / 4)));
      }
      return renewing(kv, nodeId, value, epoch, o);
    },
    async acquireSoul(soulId, nodeId) {
      const kv = await soulKv();
      for (let attempt = 0; attempt < 5; attempt++) {
        const e = await kv.get(soulId);
        try {
          const take = { lease: "soul", soulId, nodeId, op: "take" } as const;
          if (e === null || e.operation !== "PUT") return await atFaultPoint("lease.renew", () => kv.create(soulId, json({ node: nodeId })), take);
          const holder = String(parse(e.value).node ?? "");
          if (holder === nodeId) return e.revision;
          if (await nodeAlive(holder)) throw new LeaseHeldError(soulId, holder);
          return await atFaultPoint("lease.renew", () => kv.update(soulId, json({ node: nodeId }), e.revision), take);
        } catch (err) {
          // Another node moved first: look again.
          if (!isWrongLastSequence(err) && !/exists/i.test(String((err as Error).message))) throw err;
        }
      }
      throw new Error(`soul '${soulId}': its lease kept changing while this node tried to take it`);
    },
    async holder(soulId) {
      const e = await (await soulKv()).get(soulId);
      if (e === null || e.operation !== "PUT") return undefined;
      return { node: String(parse(e.value).node ?? ""), revision: e.revision };
    },
    async releaseSoul(soulId, revision) {
      const kv = await soulKv();
      await kv.delete(soulId, { previousSeq: revision }).catch((err: unknown) => {
        if (!isWrongLastSequence(err)) throw err;
      });
    },
  };
}

/**
 * `create` opens an existing bucket as it is, so a bucket made by an earlier config would
 * keep its lease length and replica count without a word: the cluster config is the truth,
 * so both are brought to it. A lease made longer is safe at once; a shorter one can let a
 * node still running the old config (renewing at a third of the old length) lapse between
 * renewals, and the fence then stops it before it commits anything (docs/STORAGE.md).
 */
async function reconcile(js: JetStreamClient, kv: KV, bucket: string, ttlMs: number | undefined, replicas: number | undefined): Promise<KV> {
  const status = await kv.status();
  const jsm = await js.jetstreamManager();
  if (ttlMs !== undefined && status.ttl !== ttlMs) await jsm.streams.update(`KV_${bucket}`, { max_age: nanos(ttlMs) });
  if (replicas !== undefined && status.replicas !== replicas) await updateReplicas(jsm, `KV_${bucket}`, status.replicas, replicas);
  return kv;
}

/** The lease's revision if it holds exactly `value` (this process's own), else undefined. */
async function ownRevision(kv: KV, nodeId: string, value: Uint8Array): Promise<number | undefined> {
  const e = await kv.get(nodeId).catch(() => null);
  return e !== null && e.operation === "PUT" && Buffer.from(e.value).equals(value) ? e.revision : undefined;
}

/** Renews the node's lease until it is released or lost. */
function renewing(kv: KV, nodeId: string, value: Uint8Array, epoch: number, o: NatsLeaseOptions): NodeLease {
  let revision = epoch;
  let lastRenewed = Date.now();
  let resolveLost!: (why: string) => void;
  const lost = new Promise<string>((r) => (resolveLost = r));
  let done = false;
  const stop = (why?: string) => {
    if (done) return;
    done = true;
    clearInterval(timer);
    if (why !== undefined) resolveLost(why);
  };
  const renewed = (r: number) => ((revision = r), (lastRenewed = Date.now()));
  const timer = setInterval(() => {
    atFaultPoint("lease.renew", () => kv.update(nodeId, value, revision), { lease: "node", nodeId, op: "renew" }).then(renewed, async (err: unknown) => {
      // The lease moved on since `revision`: by a renewal of this process whose acknowledgement
      // was lost (the value is this process's own: no other process holds its place while it
      // runs, the data directory's lock says so), or by another process.
      const own = isWrongLastSequence(err) ? await ownRevision(kv, nodeId, value) : undefined;
      if (own !== undefined) renewed(own);
      else if (isWrongLastSequence(err)) stop(`node ${nodeId}'s lease was taken by another process (or lapsed and was taken)`);
      else if (Date.now() - lastRenewed > o.ttlMs) stop(`node ${nodeId} could not renew its lease for ${o.ttlMs} ms: it has lapsed`);
    });
  }, o.renewEveryMs ?? Math.max(50, Math.floor(o.ttlMs / 3)));
  timer.unref?.();
  return {
    nodeId,
    epoch,
    lost,
    async release() {
      stop();
      await kv.delete(nodeId, { previousSeq: revision }).catch(() => undefined);
    },
  };
}
