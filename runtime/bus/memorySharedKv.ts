/**
 * The shared key-value state of the in-process bus (sharedKv.ts): a map with one revision
 * counter for the whole bucket and a watcher list, so that code written against it behaves
 * the same on NATS. Values are kept as their JSON bytes, so a reader never shares an object
 * with the writer, and the same values are refused as on NATS.
 */
import { decodeSharedValue, encodeSharedValue, sharedBucketName, sharedKey, SharedConflictError, type JsonValue, type SharedChangeListener, type SharedEntry, type SharedKv } from "./sharedKv.ts";

interface Stored {
  bytes: Uint8Array | undefined;
  revision: number;
}

export function createMemorySharedKv(cluster: string): SharedKv {
  return new MemorySharedKv(sharedBucketName(cluster));
}

class MemorySharedKv implements SharedKv {
  readonly #entries = new Map<string, Stored>();
  readonly #watchers = new Map<string, Set<SharedChangeListener>>();
  #revision = 0;

  constructor(readonly bucket: string) {}

  async get(context: string, key: string): Promise<SharedEntry | undefined> {
    const stored = this.#entries.get(sharedKey(context, key));
    return stored ? entryOf(key, stored) : undefined;
  }

  async entries(context: string): Promise<SharedEntry[]> {
    const prefix = `${sharedKey(context, "x").slice(0, -1)}`;
    const found: SharedEntry[] = [];
    for (const [full, stored] of this.#entries) {
      if (full.startsWith(prefix) && stored.bytes !== undefined) found.push(entryOf(full.slice(prefix.length), stored));
    }
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async swap(context: string, key: string, value: JsonValue | undefined, revision: number): Promise<number> {
    const full = sharedKey(context, key);
    const bytes = value === undefined ? undefined : encodeSharedValue(context, key, value);
    const current = this.#entries.get(full)?.revision ?? 0;
    if (current !== revision) throw new SharedConflictError(context, key, revision);
    // Deleting a key that was never written writes nothing, as on NATS (natsSharedKv.ts).
    if (bytes === undefined && current === 0) return 0;
    const stored = { bytes, revision: ++this.#revision };
    this.#entries.set(full, stored);
    const watchers = this.#watchers.get(context);
    if (watchers) {
      const entry = entryOf(key, stored);
      // Later, never inside the write: a watcher that writes again must not nest in it (NATS delivers asynchronously too).
      for (const listener of [...watchers]) setImmediate(() => watchers.has(listener) && listener(entry));
    }
    return stored.revision;
  }

  async watch(context: string, listener: SharedChangeListener): Promise<() => void> {
    sharedKey(context, "x");
    let watchers = this.#watchers.get(context);
    if (!watchers) this.#watchers.set(context, (watchers = new Set()));
    // Its own entry, so that the same listener watching twice is stopped once per watch.
    const own: SharedChangeListener = (entry) => listener(entry);
    watchers.add(own);
    return () => void watchers.delete(own);
  }
}

function entryOf(key: string, stored: Stored): SharedEntry {
  return { key, value: stored.bytes === undefined ? undefined : decodeSharedValue(stored.bytes), revision: stored.revision };
}
