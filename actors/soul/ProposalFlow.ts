import { atFaultPoint } from "../../runtime/faults/index.ts";
import type { ActorStore, OutboxEntry } from "../../runtime/store/index.ts";
import type { Outlet } from "../vocabulary/index.ts";
import { OutboxDelivery } from "./OutboxDelivery.ts";
import type { Perception } from "../vocabulary/index.ts";
import type { ProposalOutcome } from "./TurnTrace.ts";
import { isInterception, type Proposal, type ReviewVerdict } from "../vocabulary/index.ts";
import type { Clock } from "./scheduler.ts";
import type { SoulEvent } from "./SoulEvent.ts";
import type { TurnDraft } from "./TurnDraft.ts";

export interface ProposalFlowOptions {
  soulId: string;
  outlet: Outlet;
  store: Pick<ActorStore, "ackOutbox">;
  /** Times the retries of a failed delivery. */
  clock: Clock;
  emit(event: SoulEvent): void;
  /** Counts deliveries in flight, so the soul is not idle while one is under way. */
  busy(delta: 1 | -1): void;
}

/**
 * The way out of a soul: a turn's actions become proposals, pass review (the gate chain),
 * and, once the turn has committed them to the outbox, are delivered in order and
 * acknowledged. A delivery that fails is tried again, and what follows waits for it
 * (OutboxDelivery).
 */
export class ProposalFlow {
  readonly #o: ProposalFlowOptions;
  readonly #speechListeners = new Set<(proposal: Proposal) => void>();
  readonly #delivery: OutboxDelivery;

  constructor(options: ProposalFlowOptions) {
    this.#o = options;
    this.#delivery = new OutboxDelivery({
      clock: options.clock,
      deliver: (entry) => this.#deliverOne(entry),
      failed: (entry, err, retryInMs) => this.#failed(entry, err, retryInMs),
      busy: options.busy,
    });
  }

  /** Committed speech waits for a failed delivery to be retried: the soul's chunks are held back meanwhile. */
  get waiting(): boolean {
    return this.#delivery.waiting;
  }

  /** Committed proposals not yet delivered. */
  get undelivered(): number {
    return this.#delivery.undelivered;
  }

  /** Ends the retries; what is undelivered stays in the outbox for the next activation. */
  stop(): void {
    this.#delivery.stop();
  }

  onSpeech(listener: (proposal: Proposal) => void): () => void {
    this.#speechListeners.add(listener);
    return () => this.#speechListeners.delete(listener);
  }

  /** Resolves when no delivery is under way or waiting for a retry (see `stop`). */
  settled(): Promise<void> {
    return this.#delivery.settled();
  }

  async review(draft: TurnDraft, perception: Perception): Promise<Proposal[]> {
    const { soulId, outlet, emit } = this.#o;
    const proposals: Proposal[] = [];
    for (const action of draft.actions) {
      let proposal: Proposal = {
        id: `${draft.turnId}:${action.seq}`,
        soulId,
        turnId: draft.turnId,
        seq: action.seq,
        kind: action.kind,
        content: action.content,
        causation: perception.id,
        ts: action.ts,
        ...(action.action !== undefined ? { action: action.action } : {}),
        ...(action.data !== undefined ? { data: action.data } : {}),
        ...(perception.meta !== undefined ? { meta: perception.meta } : {}),
      };
      if (outlet.review) {
        let verdict: ReviewVerdict;
        try {
          verdict = await outlet.review(proposal, { perception });
        } catch (err) {
          // Gates fail closed: a review that cannot decide blocks the proposal.
          verdict = { intercepted: true, kind: "event", reason: `review failed: ${(err as Error)?.message ?? String(err)}` };
        }
        if (isInterception(verdict)) {
          emit({ type: "intercepted", soulId, proposal, kind: verdict.kind, reason: verdict.reason });
          const { content: _hidden, ...outcome } = outcomeOf(proposal, "intercepted");
          draft.trace?.proposals.push({ ...outcome, reason: verdict.reason });
          continue;
        }
        // A gate may change what is said, never which proposal it is.
        const transformed = verdict.content !== proposal.content || verdict.action !== proposal.action;
        proposal = { ...verdict, id: proposal.id, soulId, turnId: proposal.turnId, seq: proposal.seq };
        draft.trace?.proposals.push(outcomeOf(proposal, transformed ? "transformed" : "passed"));
      } else draft.trace?.proposals.push(outcomeOf(proposal, "passed"));
      proposals.push(proposal);
    }
    return proposals;
  }

  deliver(entries: OutboxEntry[]): void {
    this.#delivery.add(entries);
  }

  #failed(entry: OutboxEntry, err: unknown, retryInMs: number | undefined): void {
    const proposal = entry.payload as Proposal;
    const next = retryInMs === undefined ? "left in the outbox for the next activation" : `delivered again in ${retryInMs} ms, before anything said after it`;
    const message = `${(err as Error)?.message ?? String(err)}; ${next}`;
    this.#o.emit({ type: "error", soulId: this.#o.soulId, phase: "deliver", message, ...(proposal.causation ? { perceptionId: proposal.causation } : {}) });
  }

  /** Rejects when the outlet did not take it: the entry is then still in the outbox. */
  async #deliverOne(entry: OutboxEntry): Promise<void> {
    const { soulId, outlet, store, emit } = this.#o;
    const proposal = entry.payload as Proposal;
    const failed = (err: unknown) =>
      emit({ type: "error", soulId, phase: "deliver", message: (err as Error)?.message ?? String(err), ...(proposal.causation ? { perceptionId: proposal.causation } : {}) });
    const perception = proposal.causation !== undefined ? { perceptionId: proposal.causation } : {};
    await atFaultPoint("outbox.publish", () => outlet.deliver(proposal), { soulId, id: proposal.id, kind: proposal.kind, ...perception });
    // The acknowledgement does not hold up the next delivery: it only removes the entry, and
    // if it is lost the entry is delivered again with the same id, which receivers dedupe.
    this.#o.busy(1);
    store
      .ackOutbox(entry.id)
      .catch(failed)
      .finally(() => this.#o.busy(-1));
    if (proposal.kind === "speak") {
      for (const listener of this.#speechListeners) {
        try {
          listener(proposal);
        } catch {
          // A listener's failure is its own.
        }
      }
    } else if (proposal.kind === "log") {
      emit({ type: "log", soulId, message: proposal.content });
    }
  }
}

function outcomeOf(proposal: Proposal, verdict: ProposalOutcome["verdict"]): ProposalOutcome {
  const { id, kind, action, content } = proposal;
  return { id, kind, ...(action !== undefined ? { action } : {}), content, verdict };
}
