/**
 * A soul on a bus, standing in for the node that would host it: perceptions in from its
 * perceive subject, whispers in from its whisper subject (sanitised, kept with
 * `soul.whisper`), its speech out on its says subject as the outbox would publish it. Also
 * what a bridge does: `say` publishes a person's message, `heard` collects every speech
 * envelope on the says subject (the soul's and anyone else's, e.g. a daimon speaking).
 */
import { sanitizeWhisper } from "../../../actors/daimon/index.ts";
import type { Soul } from "../../../actors/soul/index.ts";
import {
  acceptEnvelopes,
  clusterSubjects,
  decodeEnvelope,
  encodeEnvelope,
  makeEnvelope,
  type Bus,
  type Envelope,
  type Subscription,
} from "../../../runtime/bus/index.ts";

export interface SoulOnBus {
  /** Whispers the soul kept. */
  whispers: number;
  /** Every speech envelope on the soul's says subject, in order. */
  heard: Envelope<"speech">[];
  /** Publishes what a person says to the soul, as a bridge would. */
  say(name: string, content: string): Promise<void>;
  close(): void;
}

export function soulOnBus(bus: Bus, soul: Soul): SoulOnBus {
  const subjects = clusterSubjects(bus.cluster);
  const heard: Envelope<"speech">[] = [];
  const state: SoulOnBus = {
    whispers: 0,
    heard,
    async say(name, content) {
      const env = makeEnvelope("perception", "bridge-test", soul.id, { action: "said", content, name });
      await bus.publish(subjects.perceive(soul.id), encodeEnvelope(env), { msgId: env.id });
    },
    close: () => undefined,
  };
  const subs: Subscription[] = [
    bus.subscribe(
      subjects.perceive(soul.id),
      acceptEnvelopes(
        bus,
        async (env) => {
          const { action, content, name, meta } = env.body;
          await soul.perceive({ id: env.id, action, content, name, ...(meta ? { meta } : {}) });
        },
        { kinds: ["perception"] },
      ),
    ),
    bus.subscribe(
      subjects.whisper(soul.id),
      acceptEnvelopes(
        bus,
        async (env) => {
          const content = sanitizeWhisper(env.body.content);
          if (!content) return;
          await soul.whisper(content, env.body.source);
          state.whispers++;
        },
        { kinds: ["whisper"] },
      ),
    ),
    bus.subscribe(subjects.says(soul.id), (msg) => {
      const decoded = decodeEnvelope(msg.data);
      if (decoded.ok && decoded.envelope.kind === "speech") heard.push(decoded.envelope as Envelope<"speech">);
    }),
  ];
  const offSpeech = soul.onSpeech((proposal) => {
    if (proposal.kind !== "speak") return;
    const speech = makeEnvelope(
      "speech",
      soul.id,
      "bridge-test",
      { proposalId: proposal.id, text: proposal.content, final: true },
      { id: proposal.id, ...(proposal.causation ? { causation: proposal.causation } : {}) },
    );
    void bus.publish(subjects.says(soul.id), encodeEnvelope(speech), { msgId: speech.id });
  });
  state.close = () => {
    offSpeech();
    for (const sub of subs) sub.unsubscribe();
  };
  return state;
}

export async function until(condition: () => boolean, ms = 5000, what = "condition"): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
