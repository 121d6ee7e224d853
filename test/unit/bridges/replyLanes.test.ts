/**
 * Replies in lanes: one channel's replies in order, a channel whose platform call hangs holding
 * only itself, a failed delivery tried again after a doubling wait and then given up, and a
 * close that starts nothing more and waits no longer.
 */
import { describe, expect, it } from "vitest";
import type { PendingReply } from "../../../bridges/core/index.ts";
import { ReplyLanes, type ReplyLanesOptions } from "../../../bridges/core/ReplyLanes.ts";

const reply = (channel: string, text: string): PendingReply => ({ perception: `p-${text}`, conversation: { platform: "slack", channel, messageId: "1", direct: false }, speaker: { kind: "soul" }, text, at: Date.now() });

function lanes(deliver: ReplyLanesOptions["deliver"], o: Partial<ReplyLanesOptions> = {}) {
  const events: string[] = [];
  const l = new ReplyLanes({
    deliver,
    failed: (id, _r, err, ms) => void events.push(`failed ${id} (${String(err)}), again in ${ms}`),
    gaveUp: async (id, _r, _err, tries) => void events.push(`gave up ${id} after ${tries}`),
    ...o,
  });
  return { lanes: l, events };
}

describe("ReplyLanes", () => {
  it("a call hanging in one channel holds back that channel's replies only", async () => {
    const delivered: string[] = [];
    let release!: () => void;
    const { lanes: l } = lanes(async (id) => {
      if (id === "hung") await new Promise<void>((r) => (release = r));
      delivered.push(id);
    });
    l.add("hung", reply("A", "hung"));
    l.add("after-hung", reply("A", "after"));
    l.add("other", reply("B", "other"));
    await new Promise((r) => setTimeout(r, 20));
    expect(delivered).toEqual(["other"]);
    release();
    await l.idle();
    expect(delivered).toEqual(["other", "hung", "after-hung"]);
  });

  it("takes a speech id once while it is queued, tries a failure again after a doubling wait, then gives up", async () => {
    let calls = 0;
    const { lanes: l, events } = lanes(async () => void (calls++, await Promise.reject(new Error("503"))), { attempts: 3, retryFirstMs: 5 });
    expect(l.add("s1", reply("A", "x"))).toBe(true);
    expect(l.add("s1", reply("A", "x"))).toBe(false);
    await l.idle();
    expect(calls).toBe(3);
    expect(events).toEqual(["failed s1 (Error: 503), again in 5", "failed s1 (Error: 503), again in 10", "gave up s1 after 3"]);
    expect(l.has("s1")).toBe(false);
  });

  it("closed, ends a wait before a retry at once and starts nothing more", async () => {
    const delivered: string[] = [];
    const { lanes: l, events } = lanes(async (id) => (id === "failing" ? Promise.reject(new Error("down")) : void delivered.push(id)), { retryFirstMs: 60_000 });
    l.add("failing", reply("A", "f"));
    await new Promise((r) => setTimeout(r, 10));
    l.add("waiting", reply("A", "w"));
    const closing = Date.now();
    l.close();
    await l.idle();
    expect(Date.now() - closing).toBeLessThan(5_000);
    expect(delivered).toEqual([]);
    // The wait is capped at 30 s whatever the first one asked.
    expect(events).toEqual(["failed failing (Error: down), again in 30000"]);
    expect(l.add("later", reply("B", "l"))).toBe(false);
  });
});
