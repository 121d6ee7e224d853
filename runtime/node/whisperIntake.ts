/**
 * Whispers in: one core subscription per node on `ensoul.<cluster>.soul.*.whisper`. A
 * whisper to a soul this node hosts is validated, sanitised (whatever sent it: a daimon, a
 * remote daimon, an operator at the CLI) and kept by the soul (`soul.whisper`) for its next
 * successful turn. Whispers are core NATS: at most once, like the intuition they carry, so
 * one the soul could not store (`soul.whisper` rejects) is dead-lettered, never counted kept.
 */
import { sanitizeWhisper } from "../../actors/daimon/index.ts";
import type { Soul } from "../../actors/soul/index.ts";
import { deadLetter, decodeEnvelope, isKind, soulOfSubject, type Bus, type ClusterSubjects, type Subscription } from "../bus/index.ts";
import type { NodeCounters } from "./controlProtocol.ts";

export interface WhisperHost {
  hosts(soulId: string): boolean;
  knows(soulId: string): boolean;
  readonly reportsUnknown: boolean;
  soul(soulId: string): Promise<Soul>;
  count(counter: keyof NodeCounters, by?: number): void;
  report(err: unknown, context: string): void;
}

export function subscribeWhispers(bus: Bus, subjects: ClusterSubjects, host: WhisperHost): Subscription {
  const dead = async (subject: string, data: Uint8Array, reason: string) => {
    host.count("dead");
    await deadLetter(bus, bus.cluster, { subject, reason, data });
  };
  return bus.subscribe(subjects.allSouls("whisper"), async (msg) => {
    const named = soulOfSubject(msg.subject);
    // Every node hears it; like an unknown soul, it is reported once.
    if ("reason" in named) return host.reportsUnknown ? dead(msg.subject, msg.data, named.reason) : undefined;
    const soulId = named.id;
    if (!host.hosts(soulId)) {
      if (!host.knows(soulId) && host.reportsUnknown) await dead(msg.subject, msg.data, `unknown soul '${soulId}' (no node of cluster '${bus.cluster}' hosts it)`);
      return;
    }
    const decoded = decodeEnvelope(msg.data);
    if (!decoded.ok) return dead(msg.subject, msg.data, decoded.reason);
    const env = decoded.envelope;
    if (!isKind(env, "whisper")) return dead(msg.subject, msg.data, `unexpected kind ${env.kind} (this receiver takes whisper)`);
    if (env.to !== soulId) return dead(msg.subject, msg.data, `envelope is addressed to '${env.to.slice(0, 128)}' but arrived on the whisper subject of '${soulId}'`);
    const content = sanitizeWhisper(env.body.content);
    if (!content) return dead(msg.subject, msg.data, "whisper is empty once sanitised");
    try {
      const soul = await host.soul(soulId);
      await soul.whisper(content, sanitizeWhisper(env.body.source, { maxChars: 128 }) || "daimon");
      host.count("whispers");
    } catch (err) {
      host.report(err, `whisper to ${soulId}`);
      await dead(msg.subject, msg.data, `whisper not kept: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
}
