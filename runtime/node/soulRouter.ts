/**
 * The one outlet the node's soul host is given: it sends each soul's proposals to that soul's
 * outlet (soulOutlets.ts), and it remembers which speech each turn will deliver, so the
 * turn's `soul.turn` event can name it. A client such as `ensoul chat` reads that list to
 * know which answers to wait for before it prompts again.
 *
 * It exists apart from the node's assembly because the announcement spans two moments that
 * must agree: speech counted at review (what passed the gates) and the turn event after
 * the commit, or nothing at all for a turn that failed.
 */
import { isInterception, type Outlet, type Proposal, type ReviewContext, type SoulEvent } from "../../actors/soul/index.ts";
import type { EventPublisher } from "./soulEvents.ts";

export interface SoulRouterOptions {
  nodeId: string;
  outlets: ReadonlyMap<string, Outlet>;
  events: EventPublisher;
  /** A soul's status changed (for the node's registry). */
  changed(soulId: string): void;
}

export function createSoulRouter({ nodeId, outlets, events, changed }: SoulRouterOptions): { router: Outlet; onSoulEvent: (event: SoulEvent) => void } {
  /** Speech each turn will deliver (passed review), by soul and turn id. */
  const turnSpeech = new Map<string, Map<string, string[]>>();
  const outletOf = (soulId: string): Outlet => {
    const outlet = outlets.get(soulId);
    if (!outlet) throw new Error(`soul '${soulId}' is not hosted on node ${nodeId}`);
    return outlet;
  };

  const router: Outlet = {
    async review(proposal: Proposal, context?: ReviewContext) {
      const outlet = outletOf(proposal.soulId);
      const verdict = outlet.review ? await outlet.review(proposal, context) : proposal;
      if (!isInterception(verdict) && verdict.kind === "speak" && !proposal.turnId.endsWith(":sub")) {
        let turns = turnSpeech.get(proposal.soulId);
        if (!turns) turnSpeech.set(proposal.soulId, (turns = new Map()));
        const ids = turns.get(proposal.turnId) ?? [];
        ids.push(proposal.id);
        turns.set(proposal.turnId, ids);
      }
      return verdict;
    },
    chunk: (soulId, proposalId, text) => outletOf(soulId).chunk?.(soulId, proposalId, text),
    deliver: (proposal) => outletOf(proposal.soulId).deliver(proposal),
  };

  const onSoulEvent = (event: SoulEvent) => {
    changed(event.soulId);
    if (event.type === "turn") {
      const turnId = `${event.soulId}:${event.turn}`;
      const turns = turnSpeech.get(event.soulId);
      const speech = turns?.get(turnId) ?? [];
      turns?.delete(turnId);
      events.soul(event, { speech, node: nodeId });
      return;
    }
    // A failed turn leaves nothing to deliver; its number is used again by the next one.
    if (event.type === "error" && event.phase === "process") turnSpeech.delete(event.soulId);
    events.soul(event);
  };

  return { router, onSoulEvent };
}
