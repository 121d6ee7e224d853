/**
 * Perceptions a soul's previous node never answered. Every node's consumer sees every soul's
 * perceptions and passes by (acks) those of souls it does not run; the node that ran a soul
 * left the ones it had not committed unacked on its own consumer, which no other node reads.
 * So a node that takes a soul over from another node (or opens one nobody ran) reads the
 * soul's subjects in the cluster stream from a margin before the soul's last record, and
 * records in the soul's inbox each perception it does not know: the inbox came with the
 * history, and knows every perception a committed turn processed, so none is answered twice.
 *
 * What the intake would refuse (not a perception, addressed to another soul, node-only fields
 * on `perceive`) is left for the intake, which dead-letters it when it meets it; approval
 * commands are left too (they decide a held proposal, not a turn).
 */
import { decodeEnvelope, isKind, type ClusterSubjects, type HistoryEntry, type SoulHistoryLog } from "../../bus/index.ts";
import type { ActorStore } from "../../store/index.ts";
import { perceptionInputOf } from "../perceptionIntake.ts";

export interface ReplayOptions {
  log: SoulHistoryLog;
  subjects: ClusterSubjects;
  store: ActorStore;
  soulId: string;
  sinceMs: number;
}

/** Records the missed perceptions in the soul's inbox, in stream order; resolves with how many. */
export async function recordMissedPerceptions(o: ReplayOptions): Promise<number> {
  const perceive = o.subjects.perceive(o.soulId);
  const [open, internal] = await Promise.all([o.log.streamSince(perceive, o.sinceMs), o.log.streamSince(o.subjects.internal(o.soulId), o.sinceMs)]);
  const tagged: (HistoryEntry & { onPerceive: boolean })[] = [...open.map((e) => ({ ...e, onPerceive: true })), ...internal.map((e) => ({ ...e, onPerceive: false }))];
  tagged.sort((a, b) => a.seq - b.seq);
  let recorded = 0;
  for (const entry of tagged) {
    const decoded = decodeEnvelope(entry.data);
    if (!decoded.ok || !isKind(decoded.envelope, "perception") || decoded.envelope.to !== o.soulId) continue;
    const body = decoded.envelope.body;
    if (entry.onPerceive && (body.internal !== undefined || body.process !== undefined)) continue;
    const action = typeof body.action === "string" ? body.action.trim().toLowerCase() : "";
    if (action === "approve" || action === "deny") continue;
    if (await o.store.receive(decoded.envelope.id, perceptionInputOf(decoded.envelope))) recorded += 1;
  }
  return recorded;
}
