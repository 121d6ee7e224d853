/**
 * A running bridge, whatever its platform: the machine that shows its connection, the policy
 * that decides what the soul answers, the ledger that makes each message one perception and
 * each reply one post, and the durable consumer on the soul's says subject that brings the
 * soul's speech back.
 *
 * A platform (slack/, discord/, http/) connects, turns its events into PlatformMessages for
 * `receive`, reports its connection with `connected` / `disconnected`, and hands the core a
 * SpeechSink for what the soul says.
 */
import { createActor, type ActorOptions } from "xstate";
import { failedTurnOf, failureReason } from "../../actors/soul/index.ts";
import { deadLetter, decodeEnvelope, encodeEnvelope, isKind, makeEnvelope, type Bus, type ClusterSubjects, type DurableConsumer, type Subscription } from "../../runtime/bus/index.ts";
import { atFaultPoint, type FaultPoint } from "../../runtime/faults/index.ts";
import type { Store } from "../../runtime/store/index.ts";
import type { LedgerBounds } from "./bridgeBounds.ts";
import { BridgeLedger, DEFAULT_LEDGER_KEEP_MS, DEFAULT_LEDGER_PRUNE_EVERY_MS, type PendingReply } from "./BridgeLedger.ts";
import { bridgeMachine, bridgeStateOf, type BridgeActor, type BridgeCounters } from "./bridgeMachine.ts";
import { decide, type BridgePolicy } from "./bridgePolicy.ts";
import { perceptionOf, type BridgeType, type Conversation, type PlatformMessage } from "./PlatformMessage.ts";
import type { Speaker, SpeechSink } from "./SpeechSink.ts";

export interface BridgeRuntimeOptions {
  /** The bridge's name: `<type>-<soul>` unless the config names it. Its LMDB keys and its consumer are named after it. */
  name: string;
  type: BridgeType;
  soul: string;
  bus: Bus;
  subjects: ClusterSubjects;
  store: Store;
  policy: BridgePolicy;
  ackWaitMs?: number;
  /** The fault point of this platform's perception publish, when it has one (the HTTP bridge: `http.publish`). */
  publishPoint?: FaultPoint;
  /** How long the ledger keeps entries and how often it is pruned (bridgeBounds.ts; defaults: 7 days, an hour). */
  ledger?: Partial<LedgerBounds>;
  report(err: unknown, what: string): void;
  /** A line for the operator that is not the bridge's own failure (a turn of the soul that failed): the node's log. */
  log?(line: string): void;
  inspect?: ActorOptions<typeof bridgeMachine>["inspect"];
}

export type ReceiveResult =
  | { status: "published"; id: string }
  /** Taken and recorded, not yet published (`keep`): `publishUnpublished` or the next start publishes it. */
  | { status: "kept"; id: string }
  | { status: "duplicate"; id: string }
  | { status: "ignored"; id: string; reason: string };

export class BridgeRuntime {
  readonly name: string;
  readonly type: BridgeType;
  readonly soul: string;
  readonly actor: BridgeActor;
  readonly ledger: BridgeLedger;
  /** The bridge's address on the bus: `from` of its perceptions, `to` of the speech answering them. */
  readonly address: string;
  #sink: SpeechSink | undefined;
  #closed = false;
  /** Messages being taken, by perception id: a repeat arriving meanwhile waits for the first. */
  readonly #taking = new Map<string, Promise<unknown>>();
  #speech: DurableConsumer | undefined;
  #failures: Subscription | undefined;
  readonly #bounds: LedgerBounds;
  #pruning: ReturnType<typeof setInterval> | undefined;
  #prune: Promise<number> | undefined;

  constructor(private readonly o: BridgeRuntimeOptions) {
    this.name = o.name;
    this.type = o.type;
    this.soul = o.soul;
    this.address = `bridge-${o.name}`;
    this.ledger = new BridgeLedger(o.store, this.address);
    // The config checks its bounds (bridgeBounds.ts); code may ask for less (a test of seconds).
    this.#bounds = { keepMs: o.ledger?.keepMs ?? DEFAULT_LEDGER_KEEP_MS, pruneEveryMs: o.ledger?.pruneEveryMs ?? DEFAULT_LEDGER_PRUNE_EVERY_MS };
    this.actor = createActor(bridgeMachine, { input: { name: o.name, type: o.type, soul: o.soul }, id: this.address, ...(o.inspect ? { inspect: o.inspect } : {}) });
    this.actor.start();
  }

  get state(): string {
    return bridgeStateOf(this.actor.getSnapshot());
  }

  get counters(): BridgeCounters {
    return this.actor.getSnapshot().context.counters;
  }

  count(counter: keyof BridgeCounters, by = 1): void {
    this.actor.send({ type: "COUNT", counter, by });
  }

  connected(): void {
    this.actor.send({ type: "CONNECTED" });
  }

  disconnected(reason: string): void {
    this.actor.send({ type: "DISCONNECTED", reason });
  }

  failed(error: string): void {
    this.actor.send({ type: "FAILED", error });
  }

  report(err: unknown, what: string): void {
    this.actor.send({ type: "ERROR", error: `${what}: ${err instanceof Error ? err.message : String(err)}` });
    this.o.report(err, `bridge ${this.name}: ${what}`);
  }

  /**
   * Starts following the soul's speech into `sink` (after what a restart left pending in it),
   * prunes the ledger now and every `pruneEveryMs`, and publishes again the messages taken whose
   * publish a crash cut short. Call once the platform side is ready to post.
   */
  async follow(sink: SpeechSink): Promise<void> {
    this.#sink = sink;
    await this.pruneLedger();
    this.#pruning = setInterval(() => void this.pruneLedger(), this.#bounds.pruneEveryMs);
    this.#pruning.unref?.();
    await sink.resume?.();
    this.#failures = this.o.bus.subscribe(this.o.subjects.events(this.soul), (msg) => this.#failedTurn(msg.data));
    this.#speech = await this.o.bus.durable(this.o.subjects.says(this.soul), this.address, (msg) => this.#hear(msg.data), {
      // An in-process stream starts empty with its process: all of it is speech of this run, some
      // perhaps a re-run turn's, published while the bridge was still connecting. NATS keeps the
      // consumer's place across restarts; a new one starts at what is new.
      deliver: this.o.bus.kind === "in-process" ? "all" : "new",
      ...(this.o.ackWaitMs !== undefined ? { ackWaitMs: this.o.ackWaitMs } : {}),
    });
    for (const message of this.ledger.unpublished()) {
      await this.#publish(message).catch((err: unknown) => this.report(err, `publishing ${message.id} again`));
    }
  }

  /**
   * A platform message: ignored by the policy (with an event saying why), a repeat of one
   * already taken, or published as a perception. Resolves once the perception is stored on
   * the bus (the platform may be told "received" then), rejects if it could not be.
   */
  receive(message: PlatformMessage): Promise<ReceiveResult> {
    if (message.own) return Promise.resolve({ status: "ignored", id: message.id, reason: "the bridge's own message" });
    // Refused, not dropped: the platform retries (Slack, an HTTP client) once a node takes it.
    if (this.#closed) return Promise.reject(new Error(`bridge ${this.name} is stopping; the message was not taken`));
    return this.#oneAtATime(message.id, () => this.#receive(message, true));
  }

  /**
   * A platform message taken as `receive` takes it, but recorded instead of published: for a
   * platform that never sends a message again (Discord), while earlier messages wait for the
   * bus (so it cannot overtake them) and while the bridge stops (the next start publishes it).
   */
  keep(message: PlatformMessage): Promise<ReceiveResult> {
    if (message.own) return Promise.resolve({ status: "ignored", id: message.id, reason: "the bridge's own message" });
    return this.#oneAtATime(message.id, () => this.#receive(message, false));
  }

  /**
   * Publishes the messages taken and not yet on the bus, in the ledger's order, and resolves
   * with how many went; rejects at the first that fails, which stays, with those after it,
   * for the next call or the next start.
   */
  async publishUnpublished(): Promise<number> {
    let published = 0;
    for (const message of this.ledger.unpublished()) {
      await this.#oneAtATime(message.id, async () => {
        // Published meanwhile (a platform's retry through `receive`): not again.
        if (!this.ledger.taken(message.id)?.unpublished) return;
        await this.#publish(message);
        published++;
      });
    }
    return published;
  }

  /** Whether `closeIntake` was called: `receive` refuses messages from then on. */
  get intakeClosed(): boolean {
    return this.#closed;
  }

  /**
   * One at a time per id: a retry (or an app_mention and its message twin) racing the first
   * must see it taken, not decide and publish beside it.
   */
  #oneAtATime<T>(id: string, take: () => Promise<T>): Promise<T> {
    const before = this.#taking.get(id) ?? Promise.resolve();
    const result = before.then(take, take);
    // Settles (never rejects) once this take is over, and forgets itself if no later take queued behind it.
    const done: Promise<void> = result.then(() => undefined, () => undefined).finally(() => {
      if (this.#taking.get(id) === done) this.#taking.delete(id);
    });
    this.#taking.set(id, done);
    return result;
  }

  async #receive(message: PlatformMessage, publish: boolean): Promise<ReceiveResult> {
    this.count("received");
    const taken = this.ledger.taken(message.id);
    if (taken && !taken.unpublished) {
      this.count("duplicates");
      return { status: "duplicate", id: message.id };
    }
    if (!taken) {
      const decision = decide(this.o.policy, message, message.thread !== undefined && this.ledger.inThread(message.channel, message.thread));
      if (!decision.answer) {
        await this.#ignored(message, decision.reason);
        return { status: "ignored", id: message.id, reason: decision.reason };
      }
    }
    if (!publish) {
      if (!taken) await this.ledger.take(message.id, conversationOf(message), message);
      return { status: "kept", id: message.id };
    }
    await this.#publish(message);
    return { status: "published", id: message.id };
  }

  /** Takes no platform message from now on (a node stopping: its souls finish, their speech still goes out). */
  closeIntake(): void {
    this.#closed = true;
  }

  /**
   * For a platform whose caller was told a publish failed and retries on its own (HTTP): the
   * next start does not publish the message behind its back. It is not forgotten: a publish
   * whose acknowledgement was lost may have landed, and the speech answering it must still
   * find its conversation; the caller's retry (same id) publishes it again, which the bus and
   * the soul's inbox take once.
   */
  async retract(perceptionId: string): Promise<void> {
    await this.ledger.leaveToCaller(perceptionId);
  }

  /** Removes ledger entries older than `keepMs` (one prune at a time); resolves to how many went. */
  pruneLedger(now = Date.now()): Promise<number> {
    return (this.#prune ??= this.ledger
      .prune(this.#bounds.keepMs, now)
      .catch((err: unknown) => (this.report(err, "pruning the ledger"), 0))
      .finally(() => (this.#prune = undefined)));
  }

  /**
   * Stops following speech (the speech in hand is recorded first) and stops the machine. Posts
   * under way finish; what the platform holds back stays in the ledger for the next start.
   */
  async stop(): Promise<void> {
    this.actor.send({ type: "STOP" });
    clearInterval(this.#pruning);
    this.#failures?.unsubscribe();
    await this.#speech?.stop();
    await this.#sink?.close?.();
    await this.#prune;
    this.actor.send({ type: "STOPPED" });
  }

  /** A reply the platform would not take after every try: a dead letter says so, as for any speech that could not be delivered. */
  async deadLetterReply(speechId: string, reply: PendingReply, err: unknown, tries: number): Promise<void> {
    const env = makeEnvelope("speech", reply.speaker.kind === "soul" ? this.soul : `daimon-${reply.speaker.name}`, this.address, { proposalId: speechId, text: reply.text, final: true }, { causation: reply.perception });
    const why = err instanceof Error ? err.message : String(err);
    const reason = `handler failed on delivery ${tries}, the last one allowed: bridge ${this.name} could not post ${speechId} in ${reply.conversation.platform} channel ${reply.conversation.channel}: ${why}`;
    await deadLetter(this.o.bus, this.o.bus.cluster, { subject: this.o.subjects.says(this.soul), reason, data: encodeEnvelope(env) });
  }

  async #publish(message: PlatformMessage): Promise<void> {
    const conversation = conversationOf(message);
    // Taken before it is published: the speech answering it must find its conversation, and a
    // publish cut short is done again (at the next start, or when the platform retries).
    const env = perceptionOf(message, this.soul, this.address);
    await this.ledger.take(message.id, conversation, message);
    const publish = () => this.o.bus.publish(this.o.subjects.perceive(this.soul), encodeEnvelope(env), { msgId: env.id });
    try {
      await (this.o.publishPoint ? atFaultPoint(this.o.publishPoint, publish, { soulId: this.soul, id: env.id }) : publish());
    } catch (err) {
      // Told to the platform as a failure: it retries (Slack, an HTTP client), or the next start publishes it.
      this.report(err, `publishing perception ${message.id}`);
      throw err;
    }
    await this.ledger.take(message.id, conversation);
    this.count("perceptions");
    this.#sink?.thinking?.(message.id, conversation);
  }

  async #ignored(message: PlatformMessage, reason: string): Promise<void> {
    this.actor.send({ type: "IGNORED", reason });
    const data = {
      bridge: this.name,
      platform: message.platform,
      channel: message.channel,
      messageId: message.messageId,
      userId: message.userId,
      reason,
      ...(message.thread !== undefined ? { thread: message.thread } : {}),
      ...(message.parentChannel !== undefined ? { parentChannel: message.parentChannel } : {}),
    };
    const env = makeEnvelope("event", this.address, this.soul, { type: "bridge.ignored", data }, { causation: message.id });
    await this.o.bus.publish(this.o.subjects.events(this.soul), encodeEnvelope(env)).catch((err: unknown) => this.report(err, "publishing a bridge.ignored event"));
  }

  /**
   * A turn of the soul that failed (its `soul.error` event; core NATS, so heard while the bridge
   * runs): for a perception of this bridge, a line in the operator's log naming the platform's
   * message, and the sink told (a chat platform posts nothing; the HTTP bridge tells its client).
   */
  #failedTurn(data: Uint8Array): void {
    const decoded = decodeEnvelope(data);
    const failed = decoded.ok ? failedTurnOf(decoded.envelope) : undefined;
    const taken = failed && failed.soulId === this.soul ? this.ledger.taken(failed.perceptionId) : undefined;
    if (!failed || !taken) return;
    const { platform, channel, thread, messageId } = taken.conversation;
    const reason = failureReason(failed);
    this.o.log?.(`bridge ${this.name}: soul ${this.soul} could not answer ${platform} message ${messageId} in channel ${channel}${thread !== undefined ? ` (thread ${thread})` : ""}: ${reason}`);
    try {
      Promise.resolve(this.#sink?.failed?.(failed.perceptionId, reason, taken.conversation)).catch((err: unknown) => this.report(err, `telling that ${failed.perceptionId} failed`));
    } catch (err) {
      this.report(err, `telling that ${failed.perceptionId} failed`);
    }
  }

  async #hear(data: Uint8Array): Promise<void> {
    const decoded = decodeEnvelope(data);
    if (!decoded.ok || !isKind(decoded.envelope, "speech")) return;
    const env = decoded.envelope;
    const perception = env.causation;
    const taken = perception !== undefined ? this.ledger.taken(perception) : undefined;
    // Speech answering someone else (another bridge, a terminal, a soul hearing this one).
    if (!taken || perception === undefined || !this.#sink) return;
    const speaker: Speaker = env.from === this.soul ? { kind: "soul" } : { kind: "daimon", name: env.from.replace(/^daimon-/, "") };
    const speech = { id: env.body.proposalId, perception, text: env.body.text, final: env.body.final, speaker, ...(env.body.chunk !== undefined ? { chunk: env.body.chunk } : {}) };
    if (speech.final) await this.#sink.final(speech, taken.conversation);
    else this.#sink.chunk(speech, taken.conversation);
  }
}

/** Where a message was said: where the speech answering it goes. */
function conversationOf(message: PlatformMessage): Conversation {
  return {
    platform: message.platform,
    channel: message.channel,
    messageId: message.messageId,
    direct: message.direct,
    ...(message.thread !== undefined ? { thread: message.thread } : {}),
  };
}
