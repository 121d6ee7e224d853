/** One send queue per channel: order kept within a channel, channels independent, rate limits waited out. */
import { describe, expect, it } from "vitest";
import { ChannelQueue, RateLimitedError } from "../../../bridges/core/index.ts";

describe("ChannelQueue", () => {
  it("runs one channel's calls in order, and a slow channel does not hold up another", async () => {
    const order: string[] = [];
    let releaseA!: () => void;
    const queue = new ChannelQueue();
    const a1 = queue.run("A", () => new Promise<void>((r) => (releaseA = () => (order.push("A1"), r()))));
    const a2 = queue.run("A", async () => void order.push("A2"));
    await queue.run("B", async () => void order.push("B1"));
    expect(order).toEqual(["B1"]);
    releaseA();
    await Promise.all([a1, a2]);
    expect(order).toEqual(["B1", "A1", "A2"]);
  });

  it("waits a rate limit's Retry-After and runs the call again; other errors reject at once", async () => {
    const waits: number[] = [];
    const queue = new ChannelQueue({ sleep: async (ms) => void waits.push(ms), maxWaitMs: 10_000 });
    let calls = 0;
    const result = await queue.run("A", async () => {
      if (++calls < 3) throw new RateLimitedError("429", calls * 1000);
      return "posted";
    });
    expect(result).toBe("posted");
    expect(waits).toEqual([1000, 2000]);
    await expect(queue.run("A", async () => Promise.reject(new Error("channel_not_found")))).rejects.toThrow("channel_not_found");
    // The queue goes on after a failure.
    expect(await queue.run("A", async () => "next")).toBe("next");
  });

  it("gives up after maxAttempts rate limits, with the last error", async () => {
    const queue = new ChannelQueue({ sleep: async () => undefined, maxAttempts: 3 });
    let calls = 0;
    await expect(queue.run("A", async () => Promise.reject(new RateLimitedError(`429 #${++calls}`, 1)))).rejects.toThrow("429 #3");
  });
});
