/**
 * A soul's memory as node control reports it: from the live soul when it is active, else as
 * LMDB holds it (a passivated soul is not activated just to be looked at).
 *
 * It exists apart from the node's assembly because it answers a control request (`memory`),
 * reading either of a soul's two homes.
 */
import type { Soul, SoulBlueprint } from "../../actors/soul/index.ts";
import type { Store } from "../store/index.ts";
import type { SoulMemoryReply } from "./controlProtocol.ts";
import { failedPerceptionsOf, MAX_FAILED_LISTED } from "./failedPerceptionList.ts";

export interface SoulMemoryContext {
  nodeId: string;
  hosted: ReadonlyMap<string, unknown>;
  known: ReadonlySet<string>;
  store: Store;
  live: ReadonlyMap<string, Soul>;
  blueprints: ReadonlyMap<string, SoulBlueprint>;
}

/** Reads a soul's memory by id; throws for a soul this node does not host. */
export function soulMemoryReader({ nodeId, hosted, known, store, live, blueprints }: SoulMemoryContext): (soulId: string) => SoulMemoryReply {
  return (soulId: string): SoulMemoryReply => {
    if (!hosted.has(soulId)) {
      throw new Error(known.has(soulId) ? `soul '${soulId}' is not hosted on node ${nodeId}` : `unknown soul '${soulId}' (souls of this cluster: ${[...known].join(", ")})`);
    }
    const actor = store.actor(soulId);
    const inbox = { pending: actor.pendingInbox().length, failed: actor.failedInbox().length };
    const failedPerceptions = failedPerceptionsOf(actor, MAX_FAILED_LISTED);
    const soul = live.get(soulId);
    if (soul) {
      const m = soul.memory();
      const s = soul.state();
      return { soulId, node: nodeId, process: s.process, turns: s.turn, workingMemory: m.workingMemory.toJSON(), soulMemory: { ...m.soulMemory }, inbox, failedPerceptions, live: true };
    }
    const state = actor.loadState();
    const bp = blueprints.get(soulId) as SoulBlueprint;
    return {
      soulId,
      node: nodeId,
      process: state?.currentProcess ?? bp.initialProcess,
      turns: state?.turn ?? 0,
      workingMemory: state?.workingMemory ?? { soulName: bp.name, memories: [], regionOrder: [] },
      soulMemory: state?.soulMemory ?? {},
      inbox,
      failedPerceptions,
      live: false,
    };
  };
}
