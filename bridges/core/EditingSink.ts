/**
 * Speech on a chat platform (Slack, Discord): the first verified piece is posted at once, the
 * pieces after it edit that message at most once per `editIntervalMs`, and the final text
 * replaces it, split at the platform's limit into further messages when it is long.
 *
 * A final is recorded in the ledger as a pending reply before the bus is told it was taken, and
 * delivered in its channel's lane (ReplyLanes.ts): the bus consumer never waits on a platform,
 * and a slow channel holds back only itself. What a crash leaves pending is taken up at the next
 * start (`resume`): a streamed draft cut short is edited, or continued, to the final text. Each
 * part is posted once (PartPoster.ts).
 *
 * Streams are bounded: a streamed proposal a gate intercepted gets no final, so a stream with no
 * piece for `idleMs`, or the one idle longest past `max`, is let go. Its draft stays as it was
 * shown; a final arriving later still finds the post in the ledger. Thinking indicators are
 * bounded by the same `max` (the oldest goes) and by THINKING_MAX_MS.
 */
import { DEFAULT_MAX_STREAMS, DEFAULT_STREAM_IDLE_MS, type StreamBounds } from "./bridgeBounds.ts";
import type { BridgeLedger, PendingReply } from "./BridgeLedger.ts";
import type { BridgeCounters } from "./bridgeMachine.ts";
import type { ChannelQueue } from "./ChannelQueue.ts";
import { PartPoster } from "./PartPoster.ts";
import type { Conversation } from "./PlatformMessage.ts";
import { ReplyLanes } from "./ReplyLanes.ts";
import type { PlatformOutlet, PostedRef, PostKey, Speaker, Speech, SpeechSink } from "./SpeechSink.ts";
import { splitText } from "./splitText.ts";

/** How long a "thinking" indicator may stay when no speech comes (a turn that says nothing). */
const THINKING_MAX_MS = 120_000;

interface Stream {
  conversation: Conversation;
  text: string;
  shown: string;
  ref?: PostedRef;
  /** The post or edit in flight. */
  busy?: Promise<void>;
  timer?: ReturnType<typeof setTimeout>;
  lastEditAt: number;
  lastPieceAt: number;
  /** The next piece's index; one arriving past it means pieces were missed (a restart): nothing more shows until the final. */
  next: number;
  gap: boolean;
  /** Set once the final took over (or the stream was let go): pieces arriving later are ignored. */
  done: boolean;
}

export interface EditingSinkHooks {
  count(counter: keyof BridgeCounters): void;
  report(err: unknown, what: string): void;
  /** A reply the platform would not take after every try (BridgeRuntime dead-letters it). */
  gaveUp?(speechId: string, reply: PendingReply, err: unknown, tries: number): Promise<void>;
}

export interface EditingSinkOptions extends Partial<StreamBounds> {
  /** Tries of one reply's delivery before it is given up (ReplyLanes.ts). */
  attempts?: number;
  retryFirstMs?: number;
}

export class EditingSink implements SpeechSink {
  /** By last piece, the idlest first. */
  readonly #streams = new Map<string, Stream>();
  readonly #thinking = new Map<string, { conversation: Conversation; timer: ReturnType<typeof setTimeout> }>();
  readonly #poster: PartPoster;
  readonly #lanes: ReplyLanes;
  readonly #maxStreams: number;
  readonly #streamIdleMs: number;
  /** Posts and edits still in flight of streams let go: a final for one waits for it, so its reference is in the ledger. */
  readonly #settling = new Map<string, Promise<void>>();
  /** Replies taken up at start: their thinking indicator is no longer in memory, but may still show. */
  readonly #resumed = new Set<string>();

  constructor(
    private readonly outlet: PlatformOutlet,
    private readonly ledger: BridgeLedger,
    private readonly queue: ChannelQueue,
    private readonly hooks: EditingSinkHooks,
    options: EditingSinkOptions = {},
  ) {
    this.#poster = new PartPoster(outlet, ledger, queue, (c) => hooks.count(c));
    this.#maxStreams = options.max ?? DEFAULT_MAX_STREAMS;
    this.#streamIdleMs = options.idleMs ?? DEFAULT_STREAM_IDLE_MS;
    this.#lanes = new ReplyLanes({
      deliver: (speechId, reply) => this.#deliver(speechId, reply),
      failed: (speechId, reply, err, retryInMs) => hooks.report(err, `posting ${speechId} in ${reply.conversation.channel} (tried again in ${retryInMs} ms)`),
      gaveUp: (speechId, reply, err, tries) => this.#giveUp(speechId, reply, err, tries),
      ...(options.attempts !== undefined ? { attempts: options.attempts } : {}),
      ...(options.retryFirstMs !== undefined ? { retryFirstMs: options.retryFirstMs } : {}),
    });
  }

  /** Streams open now (bounded by `max` and `idleMs`). */
  get streaming(): number {
    return this.#streams.size;
  }

  thinking(perception: string, conversation: Conversation): void {
    if (!this.outlet.thinking || this.#thinking.has(perception)) return;
    // As many as streams at most: past it, the oldest indicator goes (a soul that never answers must not grow the map).
    if (this.#thinking.size >= this.#maxStreams) this.#stopThinking(this.#thinking.keys().next().value as string);
    const timer = setTimeout(() => this.#stopThinking(perception), THINKING_MAX_MS);
    timer.unref?.();
    this.#thinking.set(perception, { conversation, timer });
    this.queue.run(conversation.channel, () => this.outlet.thinking!(conversation, true)).catch((err: unknown) => this.hooks.report(err, "showing that the soul thinks"));
  }

  /** Nothing is posted for a turn that failed (the core logs it with the platform's message id): the soul just stops showing that it thinks. */
  failed(perception: string, _reason: string, conversation: Conversation): void {
    this.#stopThinking(perception, conversation);
  }

  chunk(speech: Speech, conversation: Conversation): void {
    let stream = this.#streams.get(speech.id);
    if (stream) {
      // Most recently active last: eviction takes the idlest first.
      this.#streams.delete(speech.id);
      this.#streams.set(speech.id, stream);
    } else {
      // Its final is here already (a race on the bus, a redelivery): the piece must not show.
      if (this.#lanes.has(speech.id) || this.ledger.reply(speech.id) || this.ledger.post(speech.id, 0)?.final) return;
      stream = this.#open(speech.id, conversation);
    }
    if (stream.done || !this.#inOrder(stream, speech)) return;
    stream.text += speech.text;
    stream.lastPieceAt = Date.now();
    this.#schedule(speech.id, speech.speaker, stream);
  }

  async final(speech: Speech, conversation: Conversation): Promise<void> {
    const stream = this.#streams.get(speech.id);
    if (stream) this.#settle(stream);
    if (this.#lanes.has(speech.id) || this.#shown(speech)) return;
    const reply: PendingReply = { perception: speech.perception, conversation, speaker: speech.speaker, text: speech.text, at: Date.now() };
    await this.ledger.awaitReply(speech.id, reply);
    this.#lanes.add(speech.id, reply);
  }

  async resume(): Promise<void> {
    for (const { speechId, reply } of this.ledger.pendingReplies()) {
      this.#resumed.add(speechId);
      this.#lanes.add(speechId, reply);
    }
  }

  /** Resolves once every reply taken so far has been delivered (or given up on). */
  idle(): Promise<void> {
    return this.#lanes.idle();
  }

  /** Lets the deliveries and edits under way end (no rate limit is waited out); what is not posted stays in the ledger. */
  async close(): Promise<void> {
    this.#lanes.close();
    this.queue.close();
    for (const stream of this.#streams.values()) this.#settle(stream);
    await Promise.all([...[...this.#streams.values()].map((s) => s.busy?.catch(() => undefined)), ...this.#settling.values()]);
    for (const { timer } of this.#thinking.values()) clearTimeout(timer);
    this.#thinking.clear();
    await this.#lanes.idle();
    await this.queue.idle();
  }

  #open(speechId: string, conversation: Conversation): Stream {
    const now = Date.now();
    for (const [id, old] of this.#streams) {
      if (this.#streams.size < this.#maxStreams && old.lastPieceAt > now - this.#streamIdleMs) break;
      this.#letGo(id, old);
    }
    // A restart mid-utterance: the part already posted is edited, not posted again.
    const posted = this.ledger.post(speechId, 0);
    const stream: Stream = { conversation, text: "", shown: posted?.shown ?? "", lastEditAt: 0, lastPieceAt: now, next: 0, gap: false, done: false, ...(posted?.ref ? { ref: posted.ref } : {}) };
    this.#streams.set(speechId, stream);
    return stream;
  }

  /** False for a repeat; a piece past the next expected marks a gap, after which nothing shows. */
  #inOrder(stream: Stream, speech: Speech): boolean {
    if (speech.chunk === undefined) return !stream.gap;
    if (speech.chunk < stream.next) return false;
    if (speech.chunk > stream.next) stream.gap = true;
    stream.next = speech.chunk + 1;
    return !stream.gap;
  }

  #letGo(speechId: string, stream: Stream): void {
    this.#settle(stream);
    this.#streams.delete(speechId);
    if (!stream.busy) return;
    // Settles whatever the post ended in (never rejects), and forgets itself once done.
    const forget = () => {
      if (this.#settling.get(speechId) === busy) this.#settling.delete(speechId);
    };
    const busy: Promise<void> = stream.busy.then(forget, forget);
    this.#settling.set(speechId, busy);
  }

  #settle(stream: Stream): void {
    stream.done = true;
    if (stream.timer) clearTimeout(stream.timer);
    delete stream.timer;
  }

  /** Every part of the final shows its text already (a final the bus delivered again). */
  #shown(speech: Speech): boolean {
    const parts = splitText(speech.text, this.#limit(speech.speaker));
    return parts.length > 0 && parts.every((text, part) => {
      const entry = this.ledger.post(speech.id, part);
      return entry?.ref !== undefined && entry.final === true && entry.shown === text;
    });
  }

  /** Shows the stream's text now if nothing is in flight and the edit interval allows, else later. */
  #schedule(speechId: string, speaker: Speaker, stream: Stream): void {
    if (stream.busy || stream.timer || stream.done) return;
    const wait = stream.ref ? Math.max(0, stream.lastEditAt + this.outlet.editIntervalMs - Date.now()) : 0;
    if (wait > 0) {
      stream.timer = setTimeout(() => {
        delete stream.timer;
        this.#schedule(speechId, speaker, stream);
      }, wait);
      return;
    }
    const text = splitText(stream.text, this.#limit(speaker))[0] ?? "";
    if (!text.trim() || text === stream.shown) return;
    const key: PostKey = { speechId, part: 0, speaker };
    const post = () => this.#poster.joinThread(speaker, stream.conversation).then(() => this.#poster.ensure(key, stream.conversation, text, false));
    stream.busy = (stream.ref ? this.#poster.edit(stream.conversation, key, stream.ref, text) : post().then((ref) => void (stream.ref = ref)))
      .then(() => {
        stream.shown = text;
        stream.lastEditAt = Date.now();
      })
      .catch((err: unknown) => this.hooks.report(err, `streaming ${speechId}`))
      .finally(() => {
        delete stream.busy;
        if (stream.text !== stream.shown) this.#schedule(speechId, speaker, stream);
      });
  }

  #limit(speaker: Speaker): number {
    return this.outlet.limitFor?.(speaker) ?? this.outlet.limit;
  }

  /** Makes the platform show the reply whole, then forgets it (ReplyLanes calls it, and again after a failure). */
  async #deliver(speechId: string, reply: PendingReply): Promise<void> {
    const stream = this.#streams.get(speechId);
    if (stream) this.#settle(stream);
    await (stream?.busy ?? this.#settling.get(speechId))?.catch(() => undefined);
    const parts = splitText(reply.text, this.#limit(reply.speaker));
    if (parts.length) await this.#poster.joinThread(reply.speaker, reply.conversation);
    for (const [part, text] of parts.entries()) await this.#poster.ensure({ speechId, part, speaker: reply.speaker }, reply.conversation, text, true);
    await this.ledger.replied(speechId);
    this.#streams.delete(speechId);
    this.#stopThinking(reply.perception, this.#resumed.delete(speechId) ? reply.conversation : undefined);
  }

  async #giveUp(speechId: string, reply: PendingReply, err: unknown, tries: number): Promise<void> {
    this.hooks.report(err, `posting ${speechId} in ${reply.conversation.channel}: given up after ${tries} tries`);
    this.#streams.delete(speechId);
    this.#resumed.delete(speechId);
    await Promise.resolve(this.hooks.gaveUp?.(speechId, reply, err, tries)).catch((e: unknown) => this.hooks.report(e, `dead-lettering ${speechId}`));
    await this.ledger.replied(speechId).catch((e: unknown) => this.hooks.report(e, `forgetting ${speechId}`));
    this.#stopThinking(reply.perception);
  }

  /** `conversation`: a reply taken up after a restart, whose indicator may still show though it is no longer in memory. */
  #stopThinking(perception: string, conversation?: Conversation): void {
    const thinking = this.#thinking.get(perception);
    if (thinking) {
      clearTimeout(thinking.timer);
      this.#thinking.delete(perception);
    }
    const where = thinking?.conversation ?? conversation;
    if (!where || !this.outlet.thinking) return;
    this.queue.run(where.channel, () => this.outlet.thinking!(where, false)).catch((err: unknown) => this.hooks.report(err, "clearing the thinking indicator"));
  }
}
