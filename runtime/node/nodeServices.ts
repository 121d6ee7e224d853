/**
 * The services a node gives its souls' hooks (actors/soul SoulServices.ts): each one built
 * here from what the node has (its bus, its store, its config), one line per service.
 */
import type { SoulServices, SoulServicesOf } from "../../actors/soul/index.ts";
import { embeddingsFromEnv } from "../../runtime/providers/index.ts";
import { createBlueprintStores, createSoulStoreService } from "../../runtime/store/index.ts";
import { createEphemeralPublisher } from "./ephemeralEvents.ts";
import type { NodeGround } from "./nodeOpen.ts";
import type { NodeOutput } from "./nodeOutput.ts";
import type { NodePlan } from "./nodePlan.ts";
import { soulToolRegistry } from "./nodeTools.ts";
import { toolsOfBlueprint } from "./soulFolderTools.ts";

export function nodeSoulServices(plan: NodePlan, ground: NodeGround, _output: NodeOutput): SoulServicesOf {
  const sharedContext = ground.bus.sharedKv?.();
  const shared: SoulServices = {
    ephemeral: createEphemeralPublisher(ground.bus, ground.subjects, plan.report),
    ...(sharedContext ? { sharedContext, sharedContextLimits: plan.config.runtime.sharedContexts } : {}),
    // Documents live in each soul's own LMDB keyspace (read through its ActorStore); this holds the indexes, limits and embedder.
    soulStore: createSoulStoreService({ ...soulStoreOptions(), limitsOf: (id) => plan.hosted.get(id)?.soulStore }),
    blueprintStore: createBlueprintStores(),
  };
  // Tools (config `tools`): each soul gets the tools it may call (the node's tool actors start in Node.ts).
  const { config } = plan;
  const withTools = new Map<string, SoulServices>();
  return (soulId) => {
    let services = withTools.get(soulId);
    if (!services) {
      const tools = soulToolRegistry(config.tools, soulId, ground.bus, config.cluster, toolsOfBlueprint(plan.blueprints.get(soulId), ground));
      services = tools ? { ...shared, tools } : shared;
      withTools.set(soulId, services);
    }
    return services;
  };
}

/** Embeddings from ENSOUL_EMBEDDINGS_URL / _MODEL / _API_KEY (runtime/providers embeddings.ts), when set. */
function soulStoreOptions(): { embedder?: ReturnType<typeof embeddingsFromEnv> & object } {
  const embedder = embeddingsFromEnv();
  return embedder ? { embedder } : {};
}
