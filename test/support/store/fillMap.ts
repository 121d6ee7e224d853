/**
 * Fills a store opened with a `mapSize` until it refuses a write, so that the next write of
 * any actor fails as it would on a full disk: with the store's map-full StoreError, nothing
 * written. Big values first, then small ones, so no room is left for even a small commit.
 */
import type { Store } from "../../../runtime/store/index.ts";

export async function fillMap(store: Store, actorId = "ballast"): Promise<void> {
  const pad = store.kv(actorId, "pad");
  let key = 0;
  for (const size of [64 * 1024, 4 * 1024, 64]) {
    for (;;) {
      try {
        await pad.put(key++, "x".repeat(size));
      } catch (err) {
        if (!/LMDB map is full/.test((err as Error).message)) throw err;
        break;
      }
    }
  }
}
