import { describe, expect, it } from "vitest";
import { MemoryStream } from "../../../runtime/bus/memoryStream.ts";

const data = (n: number) => new Uint8Array(n);
const limits = { subjects: ["s.*.in"], duplicateWindowMs: 1_000, maxAgeMs: 10_000, maxBytes: 1_000 };

describe("in-process stream (memory only)", () => {
  it("captures only its subjects", () => {
    const st = new MemoryStream(limits);
    expect(st.captures("s.a.in")).toBe(true);
    expect(st.captures("s.a.out")).toBe(false);
    expect(st.captures("s.a.b.in")).toBe(false);
  });

  it("drops a repeated msgId within the window and accepts it after", () => {
    const st = new MemoryStream(limits);
    expect(st.append("s.a.in", data(1), undefined, "m1", 0)).toEqual({ seq: 1, duplicate: false });
    expect(st.append("s.a.in", data(1), undefined, "m1", 999).duplicate).toBe(true);
    expect(st.append("s.a.in", data(1), undefined, "m1", 1_000)).toEqual({ seq: 2, duplicate: false });
  });

  it("drops the oldest messages past its byte and age limits, and consumers skip what is gone", () => {
    const st = new MemoryStream(limits);
    const c = st.consumer("c", "s.*.in", "all");
    for (let i = 0; i < 5; i++) st.append("s.a.in", data(300), undefined, undefined, 0);
    expect(st.take(c, 0)?.msg.seq).toBe(3); // 1 and 2 were trimmed to stay under 1,000 bytes
    st.append("s.a.in", data(1), undefined, undefined, 9_000);
    expect(st.take(c, 10_000)?.msg.seq).toBe(6); // 3..5 aged out
  });

  it("redelivers a released message when it falls due, before newer ones", () => {
    const st = new MemoryStream(limits);
    const c = st.consumer("c", "s.*.in", "all");
    st.append("s.a.in", data(1), undefined, undefined, 0);
    st.append("s.b.in", data(1), undefined, undefined, 0);
    const first = st.take(c, 0);
    st.release(c, first?.msg.seq ?? 0, 50);
    expect(st.take(c, 10)?.msg.seq).toBe(2);
    expect(st.nextDue(c)).toBe(50);
    expect(st.take(c, 20)).toBeNull();
    expect(st.take(c, 50)).toMatchObject({ msg: { seq: 1 }, deliveries: 2 });
  });
});
