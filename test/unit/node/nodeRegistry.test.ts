/**
 * The registry's souls are patched in place: a flush touches the souls it patches, never the
 * others, so its cost does not grow with the souls hosted (a node of 100,000 souls flushes
 * ten times a second). Asserted by structure (same map, same untouched entries), not by time.
 */
import { describe, expect, it } from "vitest";
import type { Soul } from "../../../actors/soul/index.ts";
import { createNodeRegistry, type RegistrySoul } from "../../../runtime/node/index.ts";
import { createRegistryFeed } from "../../../runtime/node/registryFeed.ts";

const soulEntry = (id: string): RegistrySoul => ({ id, name: "Echo", process: "main", turns: 0, pending: 0, status: "passivated", activations: 0, lastTurnAt: 0 });
const registryOf = (count: number) => createNodeRegistry({ node: "n1", cluster: "c", bus: "in-process", souls: Array.from({ length: count }, (_, i) => soulEntry(`s${i}`)) });

describe("the node registry's souls", () => {
  it("are patched in place: the same map, untouched entries the same objects, patched ones new", () => {
    const registry = registryOf(100_000);
    const before = registry.getSnapshot().context;
    const untouched = before.souls.get("s500");
    const old = before.souls.get("s7") as RegistrySoul;

    registry.trigger.soulsPatched({ patches: { s7: { status: "active", turns: 1 }, s99999: { status: "running" } } });
    const after = registry.getSnapshot().context;

    expect(after).not.toBe(before); // subscribers are told
    expect(after.souls).toBe(before.souls); // no copy of the 100,000
    expect(after.souls.get("s500")).toBe(untouched);
    expect(after.souls.get("s7")).not.toBe(old);
    expect(old).toMatchObject({ status: "passivated", turns: 0 }); // an entry once read never changes
    expect(after.souls.get("s7")).toMatchObject({ status: "active", turns: 1 });
    expect(after.soulsVersion).toBe(before.soulsVersion + 1);
    expect(after.soulsChanged).toEqual(["s7", "s99999"]);
    expect([...after.liveSouls]).toEqual(["s7", "s99999"]);
    expect(after.souls.size).toBe(100_000);
  });

  it("touches only the patched entries, whatever the number hosted", () => {
    // Count the entries each patch writes: the same for 100 souls as for 100,000.
    const writes = (count: number) => {
      const registry = registryOf(count);
      const map = registry.getSnapshot().context.souls as Map<string, RegistrySoul>;
      let set = 0;
      let read = 0;
      const realSet = map.set.bind(map);
      const realGet = map.get.bind(map);
      map.set = (k, v) => (set++, realSet(k, v));
      map.get = (k) => (read++, realGet(k));
      registry.trigger.soulsPatched({ patches: { s1: { turns: 3 }, s2: { status: "active" } } });
      return { set, read };
    };
    const many = writes(100_000);
    expect(many).toEqual(writes(100));
    expect(many).toEqual({ set: 2, read: 2 });
  });

  it("leave live souls out of liveSouls once passivated, and ignore unknown ids", () => {
    const registry = registryOf(3);
    registry.trigger.soulsPatched({ patches: { s1: { status: "running" }, ghost: { status: "active" } } });
    expect([...registry.getSnapshot().context.liveSouls]).toEqual(["s1"]);
    registry.trigger.soulsPatched({ patches: { s1: { status: "passivated" } } });
    expect([...registry.getSnapshot().context.liveSouls]).toEqual([]);
    expect(registry.getSnapshot().context.souls.has("ghost")).toBe(false);
  });

  it("keep a live soul's entry when a full flush finds nothing changed (a heartbeat re-encodes only what moved)", () => {
    const registry = registryOf(10);
    const state = { status: "active", running: false, process: "main", turn: 4, pending: 0 };
    const live = new Map([["s3", { state: () => state } as unknown as Soul]]);
    const feed = createRegistryFeed(registry, live);
    feed.flush(true);
    const first = registry.getSnapshot().context.souls.get("s3");
    expect(first).toMatchObject({ status: "active", turns: 4 });
    const version = registry.getSnapshot().context.soulsVersion;
    feed.flush(true);
    expect(registry.getSnapshot().context.souls.get("s3")).toBe(first);
    expect(registry.getSnapshot().context.soulsVersion).toBe(version);
    state.turn = 5;
    feed.flush(true);
    expect(registry.getSnapshot().context.souls.get("s3")).toMatchObject({ turns: 5 });
  });
});
