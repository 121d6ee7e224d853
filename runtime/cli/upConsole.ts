/**
 * Talking to a running cluster from the terminal `ensoul up` runs in: `@samantha hello` sends
 * "hello" to samantha, a line without `@` goes to the last soul addressed (or the only one),
 * and each soul's answer is printed above the live status. It is a terminal bridge on the
 * node's bus: perceptions on the soul's perceive subject, the answer from its says subject.
 */
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { decodeEnvelope, encodeEnvelope, isKind, makeEnvelope, type Subscription } from "../bus/index.ts";
import type { EnsoulNode } from "../node/index.ts";

export interface UpConsoleOptions {
  input: Readable;
  note(line: string): void;
  /** Who speaks, as the souls perceive it. */
  user: string;
}

const FROM = "terminal-up";

export function startUpConsole(node: EnsoulNode, o: UpConsoleOptions): { stop(): void } {
  const souls = new Set(node.status().souls.map((s) => s.id));
  for (const list of Object.values(node.status().elsewhere ?? {})) for (const s of list) souls.add(s);
  let current = souls.size === 1 ? [...souls][0] : undefined;
  const asked = new Set<string>();
  const subs: Subscription[] = [...souls].map((soul) =>
    node.bus.subscribe(node.subjects.says(soul), (msg) => {
      const d = decodeEnvelope(msg.data);
      if (!d.ok || !isKind(d.envelope, "speech") || !d.envelope.body.final || !asked.has(d.envelope.causation ?? "")) return;
      o.note(`${soul}: ${d.envelope.body.text}`);
    }),
  );
  const rl = createInterface({ input: o.input, terminal: false });
  rl.on("line", (line) => {
    const m = /^@([A-Za-z0-9_-]+)\s*(.*)$/.exec(line.trim());
    const soul = m ? m[1] : current;
    const text = (m ? m[2] : line).trim();
    if (!soul) return o.note(`say it to a soul: @<soul> <text> (souls: ${[...souls].join(", ")})`);
    if (!souls.has(soul)) return o.note(`no soul '${soul}' in this cluster (souls: ${[...souls].join(", ")})`);
    current = soul;
    if (!text) return;
    const env = makeEnvelope("perception", FROM, soul, { action: "said", content: text, name: o.user });
    asked.add(env.id);
    node.bus.publish(node.subjects.perceive(soul), encodeEnvelope(env), { msgId: env.id }).catch((err: unknown) => o.note(`could not send to ${soul}: ${err instanceof Error ? err.message : String(err)}`));
  });
  return {
    stop() {
      rl.close();
      for (const s of subs) s.unsubscribe();
    },
  };
}
