import { describe, expect, it } from "vitest";
import { createInProcessBus, createMemorySharedKv, InvalidNameError, isSharedConflict, openSharedContext, SHARED_VALUE_MAX_BYTES, sharedBucketName, type SharedChange, type SharedEntry } from "../../../runtime/bus/index.ts";

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("shared key-value state, in process", () => {
  it("compare-and-set: a write with a stale revision is refused and writes nothing", async () => {
    const kv = createMemorySharedKv("t");
    const r1 = await kv.swap("room", "topic", "tea", 0);
    expect(r1).toBeGreaterThan(0);
    await expect(kv.swap("room", "topic", "coffee", 0)).rejects.toSatisfy(isSharedConflict);
    const r2 = await kv.swap("room", "topic", "coffee", r1);
    expect(r2).toBeGreaterThan(r1);
    await expect(kv.swap("room", "topic", "water", r1)).rejects.toThrow(/changed since revision/);
    expect(await kv.get("room", "topic")).toEqual({ key: "topic", value: "coffee", revision: r2 });
  });

  it("a delete keeps the key's revision, so a later create must name it", async () => {
    const kv = createMemorySharedKv("t");
    const r1 = await kv.swap("c", "k", 1, 0);
    const r2 = await kv.swap("c", "k", undefined, r1);
    expect(await kv.get("c", "k")).toEqual({ key: "k", value: undefined, revision: r2 });
    expect(await kv.entries("c")).toEqual([]);
    await expect(kv.swap("c", "k", 2, 0)).rejects.toSatisfy(isSharedConflict);
    await kv.swap("c", "k", 2, r2);
    expect(await kv.swap("c", "never", undefined, 0)).toBe(0);
  });

  it("keeps contexts apart and lists a context's keys in order", async () => {
    const kv = createMemorySharedKv("t");
    await kv.swap("a", "z", 1, 0);
    await kv.swap("a", "b", 2, 0);
    await kv.swap("ab", "c", 3, 0);
    expect((await kv.entries("a")).map((e) => [e.key, e.value])).toEqual([
      ["b", 2],
      ["z", 1],
    ]);
  });

  it("refuses names that are not tokens and values that are not plain JSON, with a clear error", async () => {
    const kv = createMemorySharedKv("t");
    await expect(kv.swap("a.b", "k", 1, 0)).rejects.toBeInstanceOf(InvalidNameError);
    await expect(kv.swap("a", "*", 1, 0)).rejects.toThrow(/shared key/);
    await expect(kv.swap("a", "k", Number.NaN, 0)).rejects.toThrow(/only finite numbers/);
    await expect(kv.swap("a", "k", { when: new Date() } as never, 0)).rejects.toThrow(/a.k.when is Date/);
    await expect(kv.swap("a", "k", "x".repeat(SHARED_VALUE_MAX_BYTES), 0)).rejects.toThrow(/over the limit/);
    expect(await kv.entries("a")).toEqual([]);
  });

  it("watchers see each later change of their context, in order, never inside the write", async () => {
    const kv = createMemorySharedKv("t");
    const seen: SharedEntry[] = [];
    const stop = await kv.watch("room", (e) => seen.push(e));
    const r1 = await kv.swap("room", "a", 1, 0);
    await kv.swap("other", "a", 9, 0);
    expect(seen).toEqual([]);
    const r2 = await kv.swap("room", "a", undefined, r1);
    await tick();
    expect(seen).toEqual([
      { key: "a", value: 1, revision: r1 },
      { key: "a", value: undefined, revision: r2 },
    ]);
    stop();
    await kv.swap("room", "b", 1, 0);
    await tick();
    expect(seen).toHaveLength(2);
  });

  it("the in-process bus gives every user the same bucket", () => {
    const bus = createInProcessBus({ cluster: "c1" });
    expect(bus.sharedKv?.()).toBe(bus.sharedKv?.());
    expect(bus.sharedKv?.().bucket).toBe(sharedBucketName("c1"));
    expect(sharedBucketName("c1")).toBe("ensoul_c1_shared");
  });
});

describe("a shared context", () => {
  it("update never loses a concurrent write: many writers incrementing one key", async () => {
    const kv = createMemorySharedKv("t");
    const a = openSharedContext(kv, "counter");
    const b = openSharedContext(kv, "counter");
    await Promise.all([a.ready, b.ready]);
    const inc = (n: number | undefined) => (n ?? 0) + 1;
    await Promise.all(Array.from({ length: 25 }, (_, i) => (i % 2 ? a : b).update<number>("n", inc)));
    expect(await a.get("n")).toBe(25);
  });

  it("data starts with what the context holds and follows changes made elsewhere; watch hears them", async () => {
    const kv = createMemorySharedKv("t");
    await kv.swap("room", "topic", "tea", 0);
    const ctx = openSharedContext(kv, "room");
    await ctx.ready;
    expect(ctx.data).toEqual({ topic: "tea" });
    const changes: SharedChange[] = [];
    const stop = ctx.watch((c) => changes.push(c));
    const other = openSharedContext(kv, "room");
    await other.set("topic", "coffee");
    await other.update<string[]>("who", (w) => [...(w ?? []), "ada"]);
    await tick();
    expect(ctx.data).toEqual({ topic: "coffee", who: ["ada"] });
    expect(changes.map((c) => [c.key, c.value])).toEqual([
      ["topic", "coffee"],
      ["who", ["ada"]],
    ]);
    expect(ctx.revision).toBe(changes.at(-1)?.revision);
    await other.delete("topic");
    await tick();
    expect(ctx.data).toEqual({ who: ["ada"] });
    stop();
  });

  it("an update that returns undefined writes nothing; one that gives up says why", async () => {
    const kv = createMemorySharedKv("t");
    const ctx = openSharedContext(kv, "c");
    let rev = await ctx.set("k", 1);
    expect(await ctx.update("k", () => undefined)).toBe(1);
    // A function that makes every attempt conflict: another write lands (at once, in process) each time.
    let n = 10;
    await expect(
      ctx.update<number>(
        "k",
        (v) => {
          void kv.swap("c", "k", ++n, rev).then((r) => (rev = r));
          return (v ?? 0) + 100;
        },
        { maxAttempts: 3 },
      ),
    ).rejects.toThrow(/still conflicting after 3 attempts/);
  });
});
