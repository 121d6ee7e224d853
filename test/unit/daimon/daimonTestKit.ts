/**
 * Shared helpers for the daimon tests (unit and integration): a model that counts its
 * calls, a bus that counts its subscriptions, and envelope publishing/collecting shortcuts.
 */
import type { CognitionContext } from "../../../runtime/cognition/index.ts";
import {
  clusterSubjects,
  decodeEnvelope,
  encodeEnvelope,
  makeEnvelope,
  type Bus,
  type BusMessage,
  type ClusterSubjects,
  type Envelope,
  type MessageHandler,
  type SubscribeOptions,
  type Subscription,
} from "../../../runtime/bus/index.ts";
import { ModelRegistry, type Completion, type CompletionRequest, type LanguageModel } from "../../../runtime/providers/index.ts";

export async function until(condition: () => boolean, ms = 5000, what = "condition"): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A model that answers with `answer` and records every request. */
export function countingModel(answer: string | ((request: CompletionRequest) => string), provider = "counting") {
  const calls: CompletionRequest[] = [];
  const complete = (request: CompletionRequest): Completion => {
    calls.push(request);
    const text = typeof answer === "string" ? answer : answer(request);
    return { text, usage: { inputTokens: 1, outputTokens: 1 }, provider, model: request.model ?? "m" };
  };
  const model: LanguageModel = {
    provider,
    complete: async (request) => complete(request),
    stream(request) {
      const done = complete(request);
      return {
        final: Promise.resolve(done),
        async *[Symbol.asyncIterator]() {
          yield done.text;
        },
      };
    },
  };
  return { model, calls };
}

export function cognitionWith(model: LanguageModel, provider = "counting"): CognitionContext {
  return { registry: new ModelRegistry().register(provider, model), defaultModel: `${provider}:m` };
}

/** The bus, with a count of subscribe calls and of subscriptions still live. */
export function spyBus(inner: Bus): { bus: Bus; stats: { subscribeCalls: number; active: number } } {
  const stats = { subscribeCalls: 0, active: 0 };
  function subscribe(subject: string, a?: MessageHandler | SubscribeOptions, b?: SubscribeOptions): Subscription {
    stats.subscribeCalls++;
    const sub = typeof a === "function" ? inner.subscribe(subject, a, b) : inner.subscribe(subject, a);
    stats.active++;
    let ended = false;
    return {
      subject: sub.subject,
      closed: sub.closed,
      accepted: () => sub.accepted(),
      unsubscribe() {
        if (!ended) stats.active--;
        ended = true;
        sub.unsubscribe();
      },
      [Symbol.asyncIterator]: () => sub[Symbol.asyncIterator](),
    };
  }
  const bus: Bus = {
    kind: inner.kind,
    cluster: inner.cluster,
    closed: inner.closed,
    publish: (subject, data, opts) => inner.publish(subject, data, opts),
    subscribe: subscribe as Bus["subscribe"],
    request: (subject, data, opts) => inner.request(subject, data, opts),
    durable: (filter, name, handler, opts) => inner.durable(filter, name, handler, opts),
    drain: () => inner.drain(),
    close: () => inner.close(),
  };
  return { bus, stats };
}

/** Every valid envelope published on a subject from now on. */
export function collect(bus: Bus, subject: string): { envelopes: Envelope[]; sub: Subscription } {
  const envelopes: Envelope[] = [];
  const sub = bus.subscribe(subject, (msg: BusMessage) => {
    const decoded = decodeEnvelope(msg.data);
    if (decoded.ok) envelopes.push(decoded.envelope);
  });
  return { envelopes, sub };
}

/** Publishes through a bridge-like sender: what a user says to the soul. */
export async function sayToSoul(bus: Bus, subjects: ClusterSubjects, soulId: string, name: string, content: string, meta?: Record<string, unknown>) {
  const env = makeEnvelope("perception", "bridge-test", soulId, { action: "said", content, name, ...(meta ? { meta } : {}) });
  await bus.publish(subjects.perceive(soulId), encodeEnvelope(env), { msgId: env.id });
  return env;
}

/** What the soul's outbox would publish: its final speech, from the soul id. */
export async function soulSays(bus: Bus, subjects: ClusterSubjects, soulId: string, text: string, opts: { final?: boolean; from?: string } = {}) {
  const env = makeEnvelope("speech", opts.from ?? soulId, "bridge-test", { proposalId: `${soulId}:${Date.now()}`, text, final: opts.final ?? true });
  await bus.publish(subjects.says(soulId), encodeEnvelope(env), { msgId: env.id });
  return env;
}

export { clusterSubjects };
