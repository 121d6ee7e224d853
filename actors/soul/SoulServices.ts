/**
 * What a soul's hooks reach beyond the soul itself, given by whoever hosts it (a node, a
 * test): tools, the soul's searchable long-term store, shared contexts, ephemeral events.
 * Each is optional: a hook whose service is missing throws a clear error naming it.
 *
 * It exists as one bag so the host passes one thing through createSoulHost → createSoul →
 * SoulRuntime → each run, and a new service is one field here and one line where the node
 * builds it (runtime/node/nodeServices.ts), not a new option at every step.
 */
import type { SharedContextLimits, SharedKv } from "../../runtime/bus/index.ts";
import type { BlueprintStores, SoulStoreService } from "../../runtime/store/index.ts";
import type { ToolRegistry } from "../tool/index.ts";

export interface SoulServices {
  /** Published on the soul's events subject and never stored (`emitEphemeral`). */
  ephemeral?(soulId: string, type: string, data: unknown): void;
  /** The cluster's shared key-value state (`useSharedContext`): shared by every soul and client, not the soul's own. */
  sharedContext?: SharedKv;
  /** How long a shared context nobody uses keeps its watch, and how many stay open (default DEFAULT_SHARED_CONTEXT_LIMITS). */
  sharedContextLimits?: Partial<SharedContextLimits>;
  /** `useSoulStore`: limits, embeddings, and each soul's cached index (runtime/store documents/). Default: one per soul runtime, no embeddings. */
  soulStore?: SoulStoreService;
  /** `useBlueprintStore`: the indexed `rag/` folders, by path. Default: one shared by the process. */
  blueprintStore?: BlueprintStores;
  /** The tools the soul may call (`useTool`, the `toolUse` step): local ones and tool actors' (actors/tool). */
  tools?: ToolRegistry;
}

/** The services of one soul, chosen by id (a host serves many souls). */
export type SoulServicesOf = (soulId: string) => SoulServices;

export const NO_SERVICES: SoulServices = Object.freeze({});

/** A hook's service is missing: says which and who provides it. */
export function missingService(hook: string, service: string): Error {
  return new Error(`${hook} needs the ${service} service, which this soul's host does not provide (a node provides it; in a test, pass services to createSoul or createSoulHost)`);
}
