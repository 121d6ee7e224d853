import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ActorStore } from "../../../runtime/store/types.ts";
import { createMemoryActorStore } from "../../../actors/soul/memoryActorStore.ts";

/** An LMDB environment in a temp dir that a test can close and reopen, as a restart would. */
export interface TestEnv {
  dir: string;
  actor(id: string): ActorStore;
  /** Closes the environment and opens it again from disk. */
  reopen(): Promise<void>;
  close(): Promise<void>;
}

export async function openTestEnv(): Promise<TestEnv> {
  const dir = mkdtempSync(join(tmpdir(), "ensoul-soul-"));
  const stores = new Map<string, ActorStore>();
  return {
    dir,
    actor(id) {
      let store = stores.get(id);
      if (!store) stores.set(id, (store = createMemoryActorStore(id)));
      return store;
    },
    async reopen() {},
    async close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
