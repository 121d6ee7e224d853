/**
 * What a host gives `useSoulStore`: the limits, the embedder if any, and the cached index of
 * each soul it hosts. The cache outlives a soul's activation (a node keeps it while the soul
 * is passivated) and is checked against LMDB on every use, so it is never trusted stale.
 */
import { DEFAULT_SOUL_STORE_LIMITS, type Embedder, type SoulStoreLimits } from "./documentTypes.ts";
import { SoulDocumentIndex } from "./SoulDocumentIndex.ts";

export interface SoulStoreService {
  /** The limits of one soul: its own (`souls[].soulStore` in a cluster config) over the service's. */
  limitsOf(soulId: string): SoulStoreLimits;
  readonly embedder?: Embedder;
  indexOf(soulId: string): SoulDocumentIndex;
}

export interface SoulStoreServiceOptions {
  limits?: Partial<SoulStoreLimits>;
  /** Per-soul limits, over `limits`. */
  limitsOf?: (soulId: string) => Partial<SoulStoreLimits> | undefined;
  embedder?: Embedder;
}

export function createSoulStoreService(options: SoulStoreServiceOptions = {}): SoulStoreService {
  const indexes = new Map<string, SoulDocumentIndex>();
  const limits = checked({ ...DEFAULT_SOUL_STORE_LIMITS, ...options.limits });
  const perSoul = new Map<string, SoulStoreLimits>();
  return {
    limitsOf(soulId) {
      const own = options.limitsOf?.(soulId);
      if (!own) return limits;
      let merged = perSoul.get(soulId);
      if (!merged) perSoul.set(soulId, (merged = checked({ ...limits, ...own })));
      return merged;
    },
    ...(options.embedder ? { embedder: options.embedder } : {}),
    indexOf(soulId) {
      let index = indexes.get(soulId);
      if (!index) indexes.set(soulId, (index = new SoulDocumentIndex()));
      return index;
    },
  };
}

function checked(limits: SoulStoreLimits): SoulStoreLimits {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value <= 0) throw new Error(`soul store limit ${name} must be a positive integer, got ${value}`);
  }
  return limits;
}
