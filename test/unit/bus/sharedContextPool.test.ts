/**
 * The shared contexts a process keeps open for its souls (runtime/bus sharedContextPool.ts):
 * one watch per name while it is used, closed once unused for `idleMs` with no listener, the
 * least recently used closed past `maxOpen`, and opened afresh by a later use. On the
 * in-process bucket, with a clock the test moves and the watches counted.
 */
import { describe, expect, it } from "vitest";
import { createMemorySharedKv, SharedContextPool, type SharedKv } from "../../../runtime/bus/index.ts";

/** The in-process bucket, counting the watches open on it. */
function countingKv(): { kv: SharedKv; open(): number } {
  const inner = createMemorySharedKv("t");
  let open = 0;
  const kv: SharedKv = {
    bucket: inner.bucket,
    get: (c, k) => inner.get(c, k),
    entries: (c) => inner.entries(c),
    swap: (c, k, v, r) => inner.swap(c, k, v, r),
    async watch(context, listener) {
      const stop = await inner.watch(context, listener);
      open++;
      let stopped = false;
      return () => {
        if (!stopped) (stopped = true), open--, stop();
      };
    },
  };
  return { kv, open: () => open };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("the shared contexts of a process", () => {
  it("shares one watch per name, and closes a context nobody used for idleMs", async () => {
    const { kv, open } = countingKv();
    let now = 0;
    const pool = new SharedContextPool(kv, { idleMs: 1_000 }, () => now);
    await pool.context("room").ready;
    await pool.context("room").ready;
    await pool.context("desk").ready;
    expect([pool.size, open()]).toEqual([2, 2]);
    now = 600;
    await pool.context("desk").set("k", 1); // used again: its idle time starts over
    now = 1_000;
    expect(pool.sweep()).toBe(1);
    await tick();
    expect([pool.size, open()]).toEqual([1, 1]);
    now = 1_600;
    expect(pool.sweep()).toBe(1);
    await tick();
    expect([pool.size, open()]).toEqual([0, 0]);
    await pool.close();
  });

  it("keeps a context with a listener open however long it is idle; closes it once the listener stops and it idles", async () => {
    const { kv, open } = countingKv();
    let now = 0;
    const pool = new SharedContextPool(kv, { idleMs: 1_000 }, () => now);
    const heard: unknown[] = [];
    const stop = pool.listen("room", (change) => heard.push(change.value));
    await pool.context("room").ready;
    now = 10_000;
    expect(pool.sweep()).toBe(0);
    await kv.swap("room", "topic", "tea", 0);
    await tick();
    expect(heard).toEqual(["tea"]);
    stop();
    expect(pool.sweep()).toBe(0); // the stop counts as its last use
    now = 11_000;
    expect(pool.sweep()).toBe(1);
    await tick();
    expect(open()).toBe(0);
    await pool.close();
  });

  it("past maxOpen, closes the least recently used context without a listener", async () => {
    const { kv, open } = countingKv();
    let now = 0;
    const pool = new SharedContextPool(kv, { maxOpen: 2 }, () => now);
    const stop = pool.listen("a", () => undefined);
    now = 1;
    pool.context("b");
    now = 2;
    pool.context("c"); // a has a listener: b goes
    await tick();
    expect(pool.size).toBe(2);
    expect(open()).toBe(2);
    stop();
    now = 3;
    pool.context("d"); // now a is the least recently used without a listener
    await tick();
    expect(pool.size).toBe(2);
    expect(open()).toBe(2);
    await pool.close();
    expect(open()).toBe(0);
  });

  it("a context closed while idle is opened afresh by its next use, with what the bucket holds now", async () => {
    const { kv, open } = countingKv();
    let now = 0;
    const pool = new SharedContextPool(kv, { idleMs: 1_000 }, () => now);
    await pool.context("room").set("topic", "tea");
    now = 5_000;
    pool.sweep();
    await kv.swap("room", "topic", "coffee", (await kv.get("room", "topic"))!.revision);
    const again = pool.context("room");
    await again.ready;
    expect(again.data).toEqual({ topic: "coffee" });
    expect(open()).toBe(1);
    await pool.close();
  });

  it("refuses limits it cannot keep, naming them", () => {
    expect(() => new SharedContextPool(createMemorySharedKv("t"), { maxOpen: 0 })).toThrow(/maxOpen a whole number of at least 1/);
  });
});
