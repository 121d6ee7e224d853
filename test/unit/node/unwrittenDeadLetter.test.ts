/**
 * The node refuses an invalid perception (or a hearing an invalid utterance) by dead-lettering
 * it and then having it acked. When that dead letter cannot be published (here: the record is
 * larger than the bus's max payload), acking it would make it vanish without a trace: the
 * handler fails instead, so the consumer delivers it again, and the record is tried again.
 */
import { describe, expect, it } from "vitest";
import { clusterSubjects, createInProcessBus, decodeDeadLetter, encodeEnvelope, makeEnvelope } from "../../../runtime/bus/index.ts";
import { startHearing } from "../../../runtime/node/hearing.ts";
import { createPerceptionIntake, type IntakeHost } from "../../../runtime/node/perceptionIntake.ts";

function hostOn(bus: IntakeHost["bus"], counted: string[]): IntakeHost {
  const unused = () => {
    throw new Error("not reached by a refused perception");
  };
  return {
    bus,
    hosts: () => true,
    knows: () => true,
    reportsUnknown: true,
    blueprint: unused,
    soul: unused,
    approvals: () => undefined,
    events: { publish: unused } as unknown as IntakeHost["events"],
    rememberSender: () => undefined,
    count: (counter) => void counted.push(counter),
  };
}

describe("a perception the node refuses", () => {
  it("is not acked while its dead letter cannot be published, and is once it can", async () => {
    // A whisper on a perceive subject: refused as the wrong kind. 400 bytes, so its dead letter
    // (the first 256 in base64, with subject and reason) is over a 450-byte limit.
    const small = createInProcessBus({ cluster: "refuse", maxPayload: 450, onHandlerError: () => undefined });
    const roomy = createInProcessBus({ cluster: "refuse", onHandlerError: () => undefined });
    const s = clusterSubjects("refuse");
    const bytes = encodeEnvelope(makeEnvelope("whisper", "x", "ann", { content: "psst ".repeat(60).slice(0, 290), source: "x" }));
    expect(bytes.length).toBeGreaterThan(380);
    expect(bytes.length).toBeLessThanOrEqual(450);
    try {
      const counted: string[] = [];
      await expect(createPerceptionIntake(hostOn(small, counted))(s.perceive("ann"), bytes)).rejects.toThrow(/could not dead-letter/);
      expect(counted).toEqual([]);

      const dead: Uint8Array[] = [];
      roomy.subscribe(s.dead, (m) => void dead.push(m.data));
      await expect(createPerceptionIntake(hostOn(roomy, counted))(s.perceive("ann"), bytes)).resolves.toBeUndefined();
      expect(counted).toEqual(["dead"]);
      await new Promise((r) => setImmediate(r));
      expect(decodeDeadLetter(dead[0]!)?.reason).toBe("unexpected kind whisper (this receiver takes perception)");
    } finally {
      await small.close();
      await roomy.close();
    }
  });
});

describe("speech a hearing refuses", () => {
  it("is delivered again while its dead letter cannot be published, not acked", async () => {
    const failures: unknown[] = [];
    // 400 bytes that are no MessagePack: their dead letter exceeds the bus's 450-byte limit.
    const bus = createInProcessBus({ cluster: "refuse", maxPayload: 450, onHandlerError: (err) => void failures.push(err) });
    const s = clusterSubjects("refuse");
    try {
      await startHearing(bus, s, { listener: "bo", speaker: "ann", speakerName: "Ann" }, { ackWaitMs: 30_000, onHeard: () => undefined });
      await new Promise((r) => setTimeout(r, 20)); // the consumer takes what is said after it starts
      await bus.publish(s.says("ann"), new Uint8Array(400).fill(0xc1));
      const start = Date.now();
      while (failures.length < 2 && Date.now() - start < 5_000) await new Promise((r) => setTimeout(r, 10));
      expect(String(failures[0])).toMatch(/could not dead-letter/);
      expect(failures.length).toBeGreaterThanOrEqual(2);
    } finally {
      await bus.close();
    }
  });
});
