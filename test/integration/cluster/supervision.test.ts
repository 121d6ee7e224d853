/**
 * A node supervises its souls: a soul whose machine fails is stopped with a `node.failed`
 * event naming it and the error, restarted with backoff (`node.restarted`), and answers again,
 * while the node's other souls keep answering. A real node on the in-process bus with a real
 * LMDB; the failure is a defect injected into the soul's machine (its whisper action throws),
 * the one thing a test cannot get from a healthy soul.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { hostOf } from "../../../actors/soul/soulMachineHost.ts";
import { decodeEnvelope, encodeEnvelope, isKind, makeEnvelope, nextUlid, type Envelope } from "../../../runtime/bus/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
let node: EnsoulNode;
const events: { soul: string; type: string; data: Record<string, unknown> }[] = [];
const lines: string[] = [];

beforeAll(async () => {
  const config = parseClusterConfig({
    cluster: "sup",
    souls: [
      { id: "echo", blueprint: echoSoul },
      { id: "other", blueprint: echoSoul },
    ],
    runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
  });
  node = await startNode({ config, data: dirs.make(), store: { noSync: true }, log: (line) => lines.push(line) });
  for (const soul of ["echo", "other"]) {
    node.bus.subscribe(node.subjects.events(soul), (msg) => {
      const d = decodeEnvelope(msg.data);
      if (d.ok && isKind(d.envelope, "event")) events.push({ soul, type: d.envelope.body.type, data: (d.envelope.body.data ?? {}) as Record<string, unknown> });
    });
  }
});
afterAll(async () => {
  await node?.stop();
  dirs.cleanup();
});

/** Says `content` to the soul as a person would (its perceive subject) and resolves with its answer. */
async function ask(soul: string, content: string): Promise<string> {
  const id = `sup-${nextUlid()}`;
  let answer: string | undefined;
  const sub = node.bus.subscribe(node.subjects.says(soul), (msg) => {
    const d = decodeEnvelope(msg.data) as { ok: true; envelope: Envelope<"speech"> } | { ok: false };
    if (d.ok && d.envelope.causation === id && d.envelope.body.final) answer = d.envelope.body.text;
  });
  try {
    await node.bus.publish(node.subjects.perceive(soul), encodeEnvelope(makeEnvelope("perception", "tester", soul, { action: "said", content, name: "Ada" }, { id })));
    await until(() => answer !== undefined, 15_000, `${soul}'s answer to ${content}`);
    return answer!;
  } finally {
    sub.unsubscribe();
  }
}

describe("a node's supervisor", () => {
  it("stops a soul whose machine fails with an event naming it and the error, restarts it with backoff, and keeps serving", async () => {
    expect(await ask("echo", "before")).toBe("echo: before");
    const soul = await node.soul("echo");
    // The defect: the machine's whisper action throws, which fails the soul's machine.
    vi.spyOn(hostOf(soul.actor.system), "whisper").mockImplementation(() => {
      throw new Error("a defect in the machine's whisper action");
    });
    soul.actor.send({ type: "WHISPER", content: "anything", source: "test" });
    await until(() => events.some((e) => e.type === "node.failed"), 5_000, "node.failed");
    expect(events.find((e) => e.type === "node.failed")).toMatchObject({
      soul: "echo",
      data: { actor: "soul echo", how: "its machine failed", error: "a defect in the machine's whisper action", failures: 1, restartInMs: 250 },
    });
    // Meanwhile, the node's other soul answers.
    expect(await ask("other", "meanwhile")).toBe("echo: meanwhile");
    // The failed soul answers again once restarted (what was sent meanwhile waited for it).
    expect(await ask("echo", "after")).toBe("echo: after");
    expect(events.filter((e) => e.soul === "echo" && e.type === "node.restarted")).toEqual([{ soul: "echo", type: "node.restarted", data: { actor: "soul echo", failures: 1 } }]);
    expect(await node.soul("echo")).not.toBe(soul);
    expect(lines.some((l) => /soul echo failed \(its machine failed\): a defect/.test(l))).toBe(true);
  });
});
