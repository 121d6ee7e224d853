import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { openStore, type Store } from "../../../runtime/store/index.ts";
import type { ActorStore } from "../../../runtime/store/types.ts";

/** An LMDB environment in a temp dir that a test can close and reopen, as a restart would. */
export interface TestEnv {
  dir: string;
  actor(id: string): ActorStore;
  /** Closes the environment and opens it again from disk. */
  reopen(): Promise<void>;
  close(): Promise<void>;
}

export async function openTestEnv(dir = mkdtempSync(join(tmpdir(), "ensoul-soul-"))): Promise<TestEnv> {
  let store: Store = openStore({ path: dir, noSync: true });
  return {
    dir,
    actor: (id) => store.actor(id),
    async reopen() {
      await store.close();
      store = openStore({ path: dir, noSync: true });
    },
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh environment for every test of the file: opened before each test, closed (and its
 * directory removed) after it. Call at the top level of a test file; use the returned env
 * inside tests only.
 */
export function useTestEnv(): TestEnv {
  let current: TestEnv | undefined;
  beforeEach(async () => {
    current = await openTestEnv();
  });
  afterEach(async () => {
    await current!.close();
  });
  const env = (): TestEnv => {
    if (!current) throw new Error("the test environment is opened before each test (use it inside a test)");
    return current;
  };
  return {
    get dir() {
      return env().dir;
    },
    actor: (id) => env().actor(id),
    reopen: () => env().reopen(),
    close: () => env().close(),
  };
}
