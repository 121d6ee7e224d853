/**
 * Test wiring for a soul on a bus, standing in for the node (which is not built yet):
 * perceptions in from the perceive subject, whispers in from the whisper subject (stored
 * with `soul.whisper`, sanitised), speech out on the says subject as the outbox would.
 */
import { sanitizeWhisper } from "../../../actors/daimon/index.ts";
import type { Soul } from "../../../actors/soul/index.ts";
import { acceptEnvelopes, clusterSubjects, encodeEnvelope, makeEnvelope, type Bus, type Subscription } from "../../../runtime/bus/index.ts";

export interface SoulOnBus {
  whispersStored: number;
  close(): void;
}

export function soulOnBus(bus: Bus, soul: Soul): SoulOnBus {
  const subjects = clusterSubjects(bus.cluster);
  const state: SoulOnBus = { whispersStored: 0, close: () => undefined };
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
          state.whispersStored++;
        },
        { kinds: ["whisper"] },
      ),
    ),
  ];
  const offSpeech = soul.onSpeech((proposal) => {
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
