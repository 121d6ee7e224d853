import { sanitizeWhisper } from "../../actors/daimon/index.ts";
import { clusterSubjects, decodeEnvelope, encodeEnvelope, isKind, makeEnvelope } from "../bus/index.ts";
import { findSoul } from "../node/index.ts";
import { CliError } from "./CliError.ts";
import { print, withBus, type ClusterTarget } from "./clusterTarget.ts";

/** `ensoul whisper <soul> <text>`: a sanitised whisper on the soul's whisper subject, confirmed by the soul's `soul.whisper` event. */
export async function whisperCommand(target: ClusterTarget & { soul: string; text: string; source: string; confirmMs?: number }): Promise<boolean> {
  const content = sanitizeWhisper(target.text);
  if (!content) throw new CliError("the whisper is empty once sanitised (markup, fences and control characters are removed)");
  return withBus(target, "whisper", async (bus) => {
    const where = await findSoul(bus, target.soul);
    const subjects = clusterSubjects(target.cluster);
    const confirmed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        sub.unsubscribe();
        resolve(false);
      }, target.confirmMs ?? 3_000);
      const sub = bus.subscribe(subjects.events(target.soul), (msg) => {
        const decoded = decodeEnvelope(msg.data);
        if (decoded.ok && isKind(decoded.envelope, "event") && decoded.envelope.body.type === "soul.whisper") {
          clearTimeout(timer);
          sub.unsubscribe();
          resolve(true);
        }
      });
    });
    const env = makeEnvelope("whisper", target.source, target.soul, { content, source: target.source });
    await bus.publish(subjects.whisper(target.soul), encodeEnvelope(env));
    const kept = await confirmed;
    print(target, kept ? `whispered to ${target.soul} (node ${where.status.node}): ${content}` : `whisper sent to ${target.soul} (node ${where.status.node}), but the soul did not confirm it within ${(target.confirmMs ?? 3_000) / 1000} s`);
    return kept;
  });
}

