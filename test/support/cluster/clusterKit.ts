/**
 * Shortcuts for talking to a cluster from a test: perceptions and whispers as a bridge or a
 * daimon would publish them.
 */
import { clusterSubjects, encodeEnvelope, makeEnvelope, type Bus, type Envelope, type PerceptionBody } from "../../../runtime/bus/index.ts";

/** Publishes a perception to a soul (stored in the stream, `Nats-Msg-Id` = its id); resolves with the envelope. */
export async function perceive(
  bus: Bus,
  soul: string,
  content: string,
  opts: { name?: string; action?: string; from?: string; body?: Partial<PerceptionBody>; id?: string } = {},
): Promise<Envelope<"perception">> {
  const env = makeEnvelope(
    "perception",
    opts.from ?? "bridge-test",
    soul,
    { action: opts.action ?? "said", content, name: opts.name ?? "ada", ...opts.body },
    opts.id !== undefined ? { id: opts.id } : {},
  );
  await bus.publish(clusterSubjects(bus.cluster).perceive(soul), encodeEnvelope(env), { msgId: env.id });
  return env;
}

export async function whisper(bus: Bus, soul: string, content: string, source = "Kothar"): Promise<Envelope<"whisper">> {
  const env = makeEnvelope("whisper", source, soul, { content, source });
  await bus.publish(clusterSubjects(bus.cluster).whisper(soul), encodeEnvelope(env));
  return env;
}

/** A cluster name no other test uses, so runs never share a stream. */
export function uniqueCluster(prefix: string): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}
