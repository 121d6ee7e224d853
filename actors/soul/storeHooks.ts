/**
 * Open Souls' long-term memory hooks: `useSoulStore()` (the soul's own documents, searchable,
 * written with the turn) and `useBlueprintStore()` (read-only documents shipped in the soul's
 * `rag/` folder). The store logic is runtime/store documents/; this file binds it to the run:
 * reads go through the run host's committed kv, writes into the turn's draft, so a `set`
 * lands with the turn's commit (nothing if the turn throws) and the turn reads its own writes.
 *
 * Without a `soulStore` service (a soul made by createSoul alone), each soul runtime gets a
 * default one with the default limits and no embeddings; its documents still live in the
 * soul's ActorStore, only the index cache is per runtime.
 */
import {
  createBlueprintStores,
  createSoulStoreService,
  SoulDocuments,
  type DocumentMetadata,
  type DocumentSearchOptions,
  type Json,
  type BlueprintStores,
  type SoulStoreService,
  type VectorRecord,
  type VectorRecordWithDistance,
} from "../../runtime/store/index.ts";
import { requireRun, type ProcessRun, type RunHost } from "./ProcessRun.ts";

export interface SoulStoreGetOptions {
  /** Return the whole record (`{ key, content, metadata, embedding? }`) instead of the content. */
  includeMetadata?: boolean;
}

/** What `useSoulStore()` and `useBlueprintStore()` return: Open Souls' shape. */
export interface SoulStoreHook {
  /** Buffers the document in the turn; it lands with the turn's commit. */
  set(key: string, value: Json, metadata?: DocumentMetadata, model?: string): void;
  /** The content (as Open Souls: `T`), or with `includeMetadata` the whole record. */
  fetch(key: string, opts: { includeMetadata: true }): Promise<VectorRecord | undefined>;
  fetch<T = Json>(key: string, opts?: SoulStoreGetOptions): Promise<T | undefined>;
  /** @deprecated Open Souls' synchronous `fetch`. */
  get(key: string, opts: { includeMetadata: true }): VectorRecord | undefined;
  get<T = Json>(key: string, opts?: SoulStoreGetOptions): T | undefined;
  remove(key: string): void;
  delete(key: string): void;
  /** BM25 (MiniSearch) by default; cosine similarity when an embeddings provider is configured or a vector is given. */
  search(query: string | number[], opts?: DocumentSearchOptions): Promise<VectorRecordWithDistance[]>;
  createEmbedding(content: string, model?: string): Promise<number[]>;
}

const defaults = new WeakMap<RunHost, SoulStoreService>();
/** Blueprint stores for hosts that give none: the folder is the truth, so one per process is safe. */
let sharedBlueprintStores: BlueprintStores | undefined;

function serviceOf(run: ProcessRun): SoulStoreService {
  const given = run.host.services.soulStore;
  if (given) return given;
  let own = defaults.get(run.host);
  if (!own) defaults.set(run.host, (own = createSoulStoreService()));
  return own;
}

function documentsOf(run: ProcessRun, label: string): SoulDocuments {
  const service = serviceOf(run);
  const { draft, host } = run;
  return new SoulDocuments({
    index: service.indexOf(run.soulId),
    read: (namespace, prefix) => host.committedKv(namespace, prefix),
    draft: {
      owner: draft,
      pending: (namespace) => draft.pendingKv(namespace),
      push: (write) => draft.kvWrites.push(write),
      now: () => host.clock.now(),
    },
    limits: service.limitsOf(run.soulId),
    ...(service.embedder ? { embedder: service.embedder } : {}),
    label,
  });
}

/** The soul's own long-term store of documents, in its LMDB keyspace. */
export function useSoulStore(): SoulStoreHook {
  const run = requireRun("useSoulStore");
  const label = "useSoulStore()";
  const docs = () => documentsOf(run, label);
  const get = <T>(key: string, opts?: SoulStoreGetOptions): T | VectorRecord | undefined => {
    const store = docs();
    const doc = store.get(key);
    if (!doc) return undefined;
    return opts?.includeMetadata ? store.record(key, doc, true) : (doc.content as T);
  };
  const remove = (key: string) => {
    run.assertLive();
    docs().remove(key);
  };
  return {
    set(key, value, metadata, model) {
      run.assertLive();
      docs().set(key, value, metadata ?? {}, model);
    },
    fetch: (async (key: string, opts?: SoulStoreGetOptions) => get(key, opts)) as SoulStoreHook["fetch"],
    get: get as SoulStoreHook["get"],
    remove,
    delete: remove,
    search(query, opts) {
      run.assertLive();
      return docs().search(query, opts);
    },
    createEmbedding: (content, model) => docs().createEmbedding(content, model),
  };
}

/**
 * Read-only search over the documents of the soul's `rag/` folder (a soul loaded from a
 * folder), indexed when first used and again when a file changes. `bucketName` is accepted
 * for Open Souls blueprints; ensoul has one bucket per soul, its `rag/` folder.
 */
export function useBlueprintStore(bucketName?: string): SoulStoreHook {
  const run = requireRun("useBlueprintStore");
  const label = `useBlueprintStore(${bucketName === undefined ? "" : JSON.stringify(bucketName)})`;
  const provider = run.host.services.blueprintStore ?? (sharedBlueprintStores ??= createBlueprintStores());
  const ragDir = run.host.blueprint.ragDir;
  if (ragDir === undefined) throw new Error(`${label}: soul '${run.host.blueprint.name}' has no rag/ folder (useBlueprintStore reads the rag/ folder of a soul loaded from a folder)`);
  const readOnly = (what: string) => () => {
    throw new Error(`${label} is read-only: ${what}() is refused; its documents are the files of ${ragDir}`);
  };
  const store = () => provider(ragDir);
  const get = <T>(key: string, opts?: SoulStoreGetOptions): T | VectorRecord | undefined => {
    const record = store().get(key);
    if (!record) return undefined;
    return opts?.includeMetadata ? record : (record.content as T);
  };
  return {
    set: readOnly("set"),
    remove: readOnly("remove"),
    delete: readOnly("delete"),
    fetch: (async (key: string, opts?: SoulStoreGetOptions) => get(key, opts)) as SoulStoreHook["fetch"],
    get: get as SoulStoreHook["get"],
    search: async (query, opts) => store().search(query, opts),
    createEmbedding: readOnly("createEmbedding"),
  };
}
