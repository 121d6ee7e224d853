import { openStore } from "../../../runtime/store/index.ts";
import type { ActorStore } from "../../../runtime/store/types.ts";

export interface BenchStore {
  kind: string;
  actor(id: string): ActorStore;
  close(): Promise<void>;
}

/**
 * The real LMDB store. `noSync` measures the soul and LMDB without the disk; `default` is
 * what a node runs with (a committed turn survives SIGKILL), so both are reported.
 */
export async function openBenchStore(dir: string, mode: "noSync" | "default" = "noSync"): Promise<BenchStore> {
  const store = openStore({ path: dir, noSync: mode === "noSync" });
  return { kind: `LMDB, ${mode}`, actor: (id) => store.actor(id), close: () => store.close() };
}
