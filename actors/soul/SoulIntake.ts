/**
 * How perceptions come into a soul: each is checked, written to the inbox (or, for a source
 * that keeps it until acknowledged, held unwritten: see HeldPerceptions) and sent to the
 * soul's machine, in the order it was taken; on activation, the pending inbox is sent again.
 *
 * Why its own file: the order is the subtle part (inbox writes go out at once, events follow
 * in call order, held perceptions go into the inbox ahead of a later one, a turn may start
 * while its perception's write syncs), and it is easier to keep right in one small place
 * than spread through the runtime. A perception on its way into the inbox counts as busy,
 * so the soul is not idle while one is.
 *
 * What a caller may rely on is unchanged by the early start: `perceive` resolves once the
 * perception is in the inbox (acknowledge it then), and nothing of its turn leaves the soul
 * before the commit that records it done. A process that dies before the inbox write lands
 * loses the perception as it always would have, whether or not its turn had begun: the caller
 * was never told it was taken. An early turn does not count on its write: its commit records
 * the perception itself (`unconfirmed`), so a write that lands late, or fails, neither fails
 * the turn nor lets the perception be answered twice: a redelivery of one whose write failed
 * waits for that turn's end, and is then a duplicate or, if the turn failed, taken afresh.
 *
 * The order of a soul's perceptions and speech is kept at five points; docs/ARCHITECTURE.md
 * ("The order of a soul's perceptions and speech") says how they relate. This is one of them.
 */
import type { Actor } from "xstate";
import { atFaultPoint } from "../../runtime/faults/index.ts";
import type { ActorStore, InboxRecord } from "../../runtime/store/index.ts";
import type { SoulBlueprint } from "./defineSoul.ts";
import { MAX_HELD, type HeldPerceptions } from "./HeldPerceptions.ts";
import type { Perception, PerceptionInput } from "../vocabulary/index.ts";
import { normalizePerception } from "./perceptionInput.ts";
import type { Clock } from "./scheduler.ts";
import type { SoulMachine } from "./soulMachine.ts";
import { DEFAULT_MAX_QUEUED, SoulQueueFull } from "./SoulQueueFull.ts";
import type { SoulStatus } from "./SoulStatus.ts";
import type { SoulState } from "./SoulState.ts";
import type { SoulWrites } from "./SoulWrites.ts";

export interface PerceiveResult {
  accepted: boolean;
  /** The perception's id (generated when the input had none): its inbox key. */
  id: string;
  /** Why it was not accepted. */
  reason?: "duplicate" | "expired";
}

/** `perceiveHeld`'s answer: `settled` is set when the soul holds the perception unwritten. */
export interface HeldPerceiveResult extends PerceiveResult {
  /** Resolves once the source may acknowledge it; rejects when the source must deliver it again. */
  settled?: Promise<void>;
}

/** What the intake needs from its soul; implemented by SoulRuntime. */
export interface IntakeSoul {
  readonly soulId: string;
  readonly blueprint: SoulBlueprint;
  readonly clock: Clock;
  readonly store: Pick<ActorStore, "receive" | "inboxEntry" | "pendingInbox" | "markError">;
  readonly actor: Pick<Actor<SoulMachine>, "getSnapshot" | "send">;
  readonly status: SoulStatus;
  lastActivity: number;
  committed(): SoulState;
}

export interface SoulIntakeOptions {
  /** Perceptions taken unwritten; the soul's turns record and settle them. */
  held: HeldPerceptions;
  /** The soul's writes: a replayed entry that cannot run is marked in line with them. */
  writes: SoulWrites;
  /** Counts perceptions on their way into the inbox, so the soul is not idle while one is. */
  busy(delta: 1 | -1): void;
  /** Perceptions that may wait behind the running one (default DEFAULT_MAX_QUEUED); past it, `perceive` refuses. */
  maxQueued: number | undefined;
}

export interface PerceiveOptions {
  /** A scheduled perception of the soul's own: taken even past the bound, as refusing it would lose it. */
  own?: boolean;
}

const noop = () => undefined;

/** A turn started before its perception's inbox write landed (`SoulIntake.#early`). */
interface EarlyTurn {
  perception: Perception;
  write: "under way" | "landed" | "failed";
  ended: boolean;
  /** Resolves once the turn has ended. */
  over: Promise<void>;
  end(): void;
}

/**
 * A perception's inbox write (fault point `perception.intake`). The store is called in this
 * event turn, so writes queue in call order, which the intake's order rests on.
 */
export function receivePerception(soul: { readonly soulId: string; readonly store: Pick<ActorStore, "receive"> }, perception: Perception): Promise<boolean> {
  return atFaultPoint("perception.intake", () => soul.store.receive(perception.id, perception), { soulId: soul.soulId, id: perception.id });
}

export class SoulIntake {
  readonly #soul: IntakeSoul;
  readonly #o: SoulIntakeOptions;
  readonly #maxQueued: number;
  #lastSend: Promise<unknown> = Promise.resolve();
  #receiving = 0;
  /** Taken the slow way: waiting for their inbox write before they go to the machine. */
  #waiting = 0;
  /** Perceptions whose inbox write is under way, by id. */
  readonly #writing = new Map<string, Perception>();
  /** Sources waiting for room in the queue (`room`). */
  #roomWaiters: (() => void)[] = [];
  /**
   * Perceptions whose turn started while their inbox write was under way, until both the
   * write has settled and the turn has ended: a redelivery waits for the turn (the two never
   * both run), and a turn whose write failed ends without a word (`turnEnded`).
   */
  readonly #early = new Map<string, EarlyTurn>();

  constructor(soul: IntakeSoul, options: SoulIntakeOptions) {
    this.#soul = soul;
    this.#o = options;
    this.#maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
    if (!Number.isInteger(this.#maxQueued) || this.#maxQueued < 1) throw new Error(`maxQueued must be a whole number of at least 1 (got ${String(options.maxQueued)})`);
  }

  /** Resolves once every perception taken so far has gone into the inbox (or failed to). */
  received(): Promise<unknown> {
    return this.#lastSend;
  }

  /** Perceptions waiting: queued in the machine, or on their way to it behind an inbox write. */
  waiting(): number {
    return this.#soul.actor.getSnapshot().context.queue.length + this.#waiting;
  }

  /**
   * Undefined when the soul can take a perception now; else resolves once it can, or once it
   * is no longer active (then `perceive` says why). For a source that waits instead of
   * sending what would be refused.
   */
  room(): Promise<void> | undefined {
    if (this.#hasRoom()) return undefined;
    return new Promise<void>((resolve) => this.#roomWaiters.push(resolve));
  }

  /** The queue may have shrunk, or the soul stopped: wakes the sources waiting for room. */
  wake(): void {
    if (this.#roomWaiters.length === 0 || !this.#hasRoom()) return;
    const waiters = this.#roomWaiters;
    this.#roomWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #hasRoom(): boolean {
    return this.#soul.status !== "active" || this.waiting() < this.#maxQueued;
  }

  perceive(input: PerceptionInput, options: PerceiveOptions = {}): Promise<PerceiveResult> {
    const soul = this.#soul;
    if (soul.status === "expired" || soul.committed().metadata["expired"] === true) {
      return Promise.resolve({ accepted: false, id: input.id ?? "", reason: "expired" });
    }
    if (soul.status !== "active" && soul.status !== "stopping") return Promise.reject(new Error(`soul '${soul.soulId}' is stopped`));
    if (options.own !== true && this.waiting() >= this.#maxQueued) return Promise.reject(new SoulQueueFull(soul.soulId, this.#maxQueued));
    let perception: Perception;
    try {
      perception = normalizePerception(input, soul.blueprint, soul.clock.now());
    } catch (error) {
      return Promise.reject(error);
    }
    const { id } = perception;
    // A turn for it began before its first delivery's write landed, and is still under way: this
    // delivery waits for it, so the two never both run (then it is a duplicate, or, if that
    // write failed and the turn too, taken afresh).
    const early = this.#early.get(id);
    if (early && !early.ended) return early.over.then(() => this.perceive(input, options));
    soul.lastActivity = soul.clock.now();
    // The turn starts while the inbox write is under way when nothing can make that wrong: the
    // id is known to be new (not in the inbox, not being written, not held) and no perception
    // before it is still waiting. The turn's commit records it done whichever of the two writes
    // lands first; nothing of the turn leaves before that commit; and the promise still
    // resolves only once the perception is in the inbox. On a store that syncs, the turn then
    // runs in the shadow of the write's sync instead of after it.
    let startsEarly: boolean;
    try {
      startsEarly = this.#waiting === 0 && this.#o.held.size === 0 && !this.#writing.has(id) && soul.store.inboxEntry(id) === undefined;
    } catch (error) {
      // An id the inbox cannot key, or a closed store: refused before anything runs.
      return Promise.reject(error);
    }
    this.#o.busy(1);
    this.#receiving++;
    // Held perceptions go into the inbox ahead of this one, so a crash replays them in order.
    if (this.#o.held.size) this.#o.held.demote((p) => receivePerception(soul, p));
    const received = receivePerception(soul, perception);
    this.#writing.set(id, perception);
    let ordered: Promise<boolean>;
    if (startsEarly) {
      const turn = this.#earlyTurn(perception);
      this.#send(perception);
      // Written meanwhile by no one else (the checks above): the turn under way is its only one.
      ordered = received.then(
        () => (this.#written(turn, "landed"), true),
        (error: unknown) => {
          this.#written(turn, "failed");
          throw error;
        },
      );
    } else {
      this.#waiting++;
      // Inbox writes go out at once; PERCEIVE events follow in call order, so a receive that
      // finishes early waits for the ones before it (only when there are any).
      const inOrder = this.#receiving === 1 ? received : Promise.all([received, this.#lastSend]).then(([accepted]) => accepted);
      ordered = inOrder.then(
        (accepted) => {
          this.#waiting--;
          if (accepted) this.#send(perception);
          return accepted;
        },
        (error: unknown) => {
          this.#waiting--;
          throw error;
        },
      );
    }
    const sent = ordered.then(
      (accepted) => {
        this.#received(id);
        return accepted ? { accepted, id } : { accepted, id, reason: "duplicate" as const };
      },
      (error: unknown) => {
        this.#received(id);
        throw error;
      },
    );
    this.#lastSend = sent.then(noop, noop);
    return sent;
  }

  /**
   * For a source that keeps each perception until it acknowledges it (the node's JetStream
   * consumer). The soul takes it with nothing written first: the turn's commit records it in
   * the inbox, done, and `settled` resolves then, or once a failure is recorded; it rejects
   * if the soul stops first (see HeldPerceptions). While perceptions are on their way into
   * the inbox, or MAX_HELD are held, it goes in as with `perceive`, and the result has no
   * `settled`: it may be acknowledged at once. Resolves once the perception is in line;
   * past the bound it is refused as by `perceive`.
   */
  perceiveHeld(input: PerceptionInput): Promise<HeldPerceiveResult> {
    const soul = this.#soul;
    // Past the bound, `perceive` refuses it.
    const full = this.waiting() >= this.#maxQueued;
    if (full || this.#receiving > 0 || this.#o.held.size >= MAX_HELD || soul.status !== "active" || soul.committed().metadata["expired"] === true) return this.perceive(input);
    if (soul.actor.getSnapshot().status !== "active") return this.perceive(input);
    let perception: Perception;
    try {
      perception = normalizePerception(input, soul.blueprint, soul.clock.now());
    } catch (error) {
      return Promise.reject(error);
    }
    if (soul.store.inboxEntry(perception.id)) return Promise.resolve({ accepted: false, id: perception.id, reason: "duplicate" });
    // Delivered again while held (the source's redelivery): acknowledged when the first is.
    const held = this.#o.held.settlement(perception.id);
    if (held) return Promise.resolve({ accepted: false, id: perception.id, reason: "duplicate", settled: held });
    soul.lastActivity = soul.clock.now();
    const settled = this.#o.held.hold(perception);
    this.#send(perception);
    return Promise.resolve({ accepted: true, id: perception.id, settled });
  }

  /**
   * What a turn's commit records in the inbox for a perception whose own write it cannot count
   * on: one under way (issued, or not yet), or one that failed after the turn began. Recorded
   * done by the commit, whichever of the two writes lands first (Inbox.recordDoneInTransaction).
   */
  unconfirmed(id: string): InboxRecord | undefined {
    const early = this.#early.get(id);
    const perception = this.#writing.get(id) ?? (early?.write === "failed" ? early.perception : undefined);
    return perception ? { id, perception } : undefined;
  }

  /**
   * The turn of this perception has ended (committed, or failed). True when it began before
   * its inbox write, which then failed: the caller was told the perception was not taken and
   * delivers it again; that redelivery, waiting for this turn, goes on now.
   */
  turnEnded(id: string): boolean {
    const early = this.#early.get(id);
    if (!early || early.ended) return false;
    early.ended = true;
    early.end();
    if (early.write !== "under way") this.#early.delete(id);
    return early.write === "failed";
  }

  /** The soul stopped: redeliveries waiting for a turn go on (and are refused as stopped). */
  releaseUnwritten(): void {
    for (const id of [...this.#early.keys()]) this.turnEnded(id);
    this.#early.clear();
  }

  #earlyTurn(perception: Perception): EarlyTurn {
    let end!: () => void;
    const over = new Promise<void>((resolve) => (end = resolve));
    const turn: EarlyTurn = { perception, write: "under way", ended: false, over, end };
    this.#early.set(perception.id, turn);
    return turn;
  }

  #written(turn: EarlyTurn, outcome: "landed" | "failed"): void {
    turn.write = outcome;
    // Both over: nothing to wait for. (A turn that ended first, before a failed write was known,
    // recorded its perception's fate itself: its redelivery is a duplicate.)
    if (turn.ended && this.#early.get(turn.perception.id) === turn) this.#early.delete(turn.perception.id);
  }

  /** Sends the pending inbox to the machine in order (on activation). */
  replay(): void {
    const soul = this.#soul;
    for (const entry of soul.store.pendingInbox()) {
      const perception = entry.perception as Perception;
      if (perception.process !== undefined && !soul.blueprint.processes.has(perception.process)) {
        // A mark that cannot be written leaves the entry pending: the next activation tries again.
        this.#o.writes.run(() => soul.store.markError(entry.id, `process '${perception.process}' is not in blueprint '${soul.blueprint.name}'`)).catch(noop);
        continue;
      }
      this.#send(perception);
    }
  }

  #send(perception: Perception): void {
    // A stopped soul leaves it in the inbox: the next activation replays it.
    if (this.#soul.actor.getSnapshot().status !== "active") return;
    const routed = perception.internal === true && perception.process !== undefined;
    this.#soul.actor.send({ type: routed ? "SCHEDULED" : "PERCEIVE", perception });
  }

  #received(id: string): void {
    this.#writing.delete(id);
    this.#receiving--;
    this.#o.busy(-1);
    // A duplicate went nowhere: its place in line is free again.
    this.wake();
  }
}
