import { unpack } from "msgpackr";
import { describe, expect, it } from "vitest";
import { createInProcessBus, deadLetter, decodeDeadLetter, encodeDeadLetter, makeDeadLetter, type BusMessage } from "../../../runtime/bus/index.ts";
import { configureLogging } from "../../../runtime/log/index.ts";

describe("dead letters", () => {
  it("keeps the subject, the reason, the size and only the first 256 bytes", () => {
    const data = new Uint8Array(1000).map((_, i) => i % 256);
    const record = makeDeadLetter({ subject: "ensoul.c.soul.a.perceive", reason: "not msgpack", data }, 42);
    expect(record).toEqual({ v: 1, subject: "ensoul.c.soul.a.perceive", reason: "not msgpack", size: 1000, head: Buffer.from(data.subarray(0, 256)).toString("base64"), ts: 42 });
    const bytes = encodeDeadLetter(record);
    expect(decodeDeadLetter(bytes)).toEqual(record);
    expect(unpack(bytes)).toEqual({ ...record, ts: 42n }); // plain msgpack map, ts an int64
    expect(decodeDeadLetter(new Uint8Array([0xc1]))).toBeNull();
    expect(decodeDeadLetter(new Uint8Array([0x01]))).toBeNull();
  });

  it("writes head in standard, padded base64 (PROTOCOL.md §8), empty for an empty payload", () => {
    expect(makeDeadLetter({ subject: "s", reason: "r", data: new Uint8Array([0xfb, 0xff]) }).head).toBe("+/8=");
    expect(makeDeadLetter({ subject: "s", reason: "r", data: new Uint8Array([0xc1]) }).head).toBe("wQ==");
    expect(makeDeadLetter({ subject: "s", reason: "r", data: new Uint8Array() }).head).toBe("");
  });

  it("publishes on ensoul.<cluster>.dead and never throws, even on a closed bus", async () => {
    const bus = createInProcessBus({ cluster: "c9" });
    const got: BusMessage[] = [];
    bus.subscribe("ensoul.c9.dead", (m) => void got.push(m));
    expect(await deadLetter(bus, "c9", { subject: "x.y", reason: "bad", data: new Uint8Array([1, 2, 3]) })).toBe(true);
    await new Promise((r) => setTimeout(r, 10));
    expect(decodeDeadLetter(got[0].data)).toMatchObject({ subject: "x.y", reason: "bad", size: 3, head: "AQID" });
    await bus.close();
    const errors: string[] = [];
    configureLogging({ target: { write: (line) => void errors.push(line) }, format: "json" });
    try {
      expect(await deadLetter(bus, "c9", { subject: "x.y", reason: "bad", data: new Uint8Array() })).toBe(false);
    } finally {
      configureLogging();
    }
    // One error line in the runtime log, naming the component and what could not be reported.
    expect(errors).toHaveLength(1);
    expect(JSON.parse(errors[0])).toMatchObject({ level: "error", component: "bus", msg: expect.stringMatching(/^could not dead-letter a message from x\.y \(bad\)/) });
  });
});
