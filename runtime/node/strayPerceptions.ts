/**
 * Perceptions no consumer will ever deliver. NATS lets a client publish with a literal `>`
 * as a subject token: the cluster stream stores `ensoul.<c>.soul.>.perceive` (its subject
 * `soul.*.perceive` takes any token), but JetStream hands a stored message only to consumers
 * whose filter covers its whole subject, and `soul.*.perceive` does not cover one whose `>`
 * stands for any number of tokens. Such a perception would sit in the stream unseen, neither
 * answered nor dead-lettered. So the node that reports unknown souls also listens on core
 * NATS, where the subscription matches it like any other token, and dead-letters it.
 *
 * Only `>` needs this: a literal `*` (or any other bad token) is delivered by the consumer and
 * refused by the intake. Core NATS is at most once, so one published while this node is down
 * is not reported: a client must check its tokens itself (PROTOCOL.md §2).
 */
import { deadLetter, soulOfSubject, type Bus, type ClusterSubjects } from "../bus/index.ts";

/** Starts listening; resolves the returned cleanup to stop. */
export function watchStrayPerceptions(bus: Bus, subjects: ClusterSubjects, onDead: () => void): () => Promise<void> {
  const sub = bus.subscribe(subjects.allSouls("perceive"), async (msg) => {
    if (msg.subject.split(".")[3] !== ">") return;
    const named = soulOfSubject(msg.subject);
    const reason = "reason" in named ? named.reason : "no soul";
    onDead();
    await deadLetter(bus, bus.cluster, { subject: msg.subject, reason: `${reason}; no stream consumer delivers this subject`, data: msg.data });
  });
  return async () => sub.unsubscribe();
}
