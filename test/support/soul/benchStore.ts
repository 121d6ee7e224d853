import { openStore } from "../../../runtime/store/index.ts";
import type { ActorStore } from "../../../runtime/store/types.ts";

export interface BenchStore {
  kind: string;
  actor(id: string): ActorStore;
  close(): Promise<void>;
}

/** The real LMDB store, without fsync: benchmarks measure the soul and LMDB, not the disk. */
export async function openBenchStore(dir: string): Promise<BenchStore> {
  const store = openStore({ path: dir, noSync: true });
  return { kind: "LMDB, noSync", actor: (id) => store.actor(id), close: () => store.close() };
}
