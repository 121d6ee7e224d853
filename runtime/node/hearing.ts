/**
 * Souls hear souls: `souls[].hears: [other]` makes the node hosting the listener turn every
 * final utterance of `other` into a perception for the listener, published on the
 * listener's perceive subject. The speaker may live on any node.
 *
 * Each hearing is a durable consumer of the speaker's says subject (`hear-<listener>-<speaker>`,
 * starting at what is said after it is first created), so speech said while the listener's
 * node is down is heard when it is back. The perception's id is derived from the speech id
 * and used as its `Nats-Msg-Id`, and its `causation` is the speech id: whatever is
 * redelivered, the listener perceives each utterance once (stream dedupe, then its inbox).
 */
import { createHash } from "node:crypto";
import { deadLetter, decodeEnvelope, encodeEnvelope, isKind, makeEnvelope, NAME_MAX_LENGTH, type Bus, type ClusterSubjects, type DurableConsumer } from "../bus/index.ts";

export interface Hearing {
  listener: string;
  speaker: string;
  /** The speaker's display name: who the listener perceives as speaking. */
  speakerName: string;
}

/** The id of the perception an utterance becomes for one listener: stable, so a re-send is recognised. */
export function heardPerceptionId(listener: string, speechId: string): string {
  const id = `heard:${listener}:${speechId}`;
  return id.length <= 256 ? id : `heard:${createHash("sha256").update(`${listener}\u0000${speechId}`).digest("hex")}`;
}

export function hearingConsumerName(listener: string, speaker: string): string {
  const name = `hear-${listener}-${speaker}`;
  return name.length <= NAME_MAX_LENGTH ? name : `hear-${createHash("sha256").update(`${listener}\u0000${speaker}`).digest("hex").slice(0, 40)}`;
}

export async function startHearing(
  bus: Bus,
  subjects: ClusterSubjects,
  h: Hearing,
  options: { ackWaitMs: number; onHeard(): void },
): Promise<DurableConsumer> {
  const says = subjects.says(h.speaker);
  const perceive = subjects.perceive(h.listener);
  return bus.durable(
    says,
    hearingConsumerName(h.listener, h.speaker),
    async (msg) => {
      const decoded = decodeEnvelope(msg.data);
      if (!decoded.ok) {
        // Acked only with its dead letter written; otherwise it fails, and comes back.
        if (await deadLetter(bus, bus.cluster, { subject: msg.subject, reason: decoded.reason, data: msg.data })) return;
        throw new Error(`could not dead-letter a message from ${msg.subject} (${decoded.reason})`);
      }
      const speech = decoded.envelope;
      // Chunks repeat the final text; another voice on the subject (a daimon speaking) is not the soul.
      if (!isKind(speech, "speech") || !speech.body.final || speech.from !== h.speaker || speech.body.text.trim() === "") return;
      const perception = makeEnvelope(
        "perception",
        h.speaker,
        h.listener,
        { action: "said", content: speech.body.text, name: h.speakerName, meta: { heardFrom: h.speaker } },
        { id: heardPerceptionId(h.listener, speech.id), causation: speech.id, ...(speech.trace ? { trace: speech.trace } : {}) },
      );
      await bus.publish(perceive, encodeEnvelope(perception), { msgId: perception.id });
      options.onHeard();
    },
    { deliver: "new", ackWaitMs: options.ackWaitMs },
  );
}

/** Every hearing of the listeners given: one durable consumer per listener and speaker. */
export async function startHearings(
  bus: Bus,
  subjects: ClusterSubjects,
  listeners: readonly { id: string; hears?: readonly string[] }[],
  nameOf: (speaker: string) => string,
  options: { ackWaitMs: number; onHeard(): void },
): Promise<DurableConsumer[]> {
  const hearings: DurableConsumer[] = [];
  try {
    for (const listener of listeners) {
      for (const speaker of listener.hears ?? []) {
        hearings.push(await startHearing(bus, subjects, { listener: listener.id, speaker, speakerName: nameOf(speaker) }, options));
      }
    }
  } catch (err) {
    await Promise.all(hearings.map((h) => h.stop()));
    throw err;
  }
  return hearings;
}
