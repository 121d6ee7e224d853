/**
 * Real LMDB in a temporary directory per test: `tempStores()` registers the cleanup (close
 * every store opened, remove the directory) with vitest's afterEach.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { openStore, type Store } from "../../../runtime/store/index.ts";
import type { StoreOptions } from "../../../runtime/store/types.ts";

export interface TempStores {
  /** A fresh directory for this test. */
  dir(): string;
  /** Opens a store in this test's directory (unless a path is given), with the default, durable options. */
  open(options?: StoreOptions): Store;
}

export function tempStores(): TempStores {
  let dir: string | undefined;
  const opened: Store[] = [];
  afterEach(async () => {
    await Promise.allSettled(opened.splice(0).map((store) => store.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const current = (): string => (dir ??= mkdtempSync(join(tmpdir(), "ensoul-store-")));
  return {
    dir: current,
    open(options = {}) {
      const store = openStore({ ...options, path: options.path ?? current() });
      opened.push(store);
      return store;
    },
  };
}
