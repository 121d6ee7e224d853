import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSoul, defineSoul, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { openStore, type Store } from "../../../runtime/store/index.ts";
import { deferred, record, said } from "../../support/soul/helpers.ts";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `perceive` on the crash-safe default store, whose writes resolve only after LMDB commits
 * them on its writer thread: the turn may start while the perception's inbox write is under
 * way, and the promise still resolves only once the perception is in the inbox.
 */
let dir: string;
let store: Store;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ensoul-intake-"));
  store = openStore({ path: dir });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Records the id of each perception a turn runs for. */
function observedSoul(id: string, runs: string[]) {
  const main: MentalProcess = async ({ workingMemory }) => {
    const perception = usePerceptions().invokingPerception;
    runs.push(perception.id);
    useActions().speak(`echo: ${perception.content}`);
    return workingMemory;
  };
  return createSoul({ blueprint: defineSoul({ name: "I", persona: "", initialProcess: main, processes: { main } }), id, store: store.actor(id) });
}

describe("a soul's intake on a store that syncs", () => {
  it("starts the turn while the inbox write is under way, resolves once the perception is in the inbox, and commits it done", async () => {
    // A disk that takes its time: the inbox write waits for the test to let it through.
    const writeGate = deferred();
    const turnGate = deferred();
    const started = deferred();
    const real = store.actor("i1");
    const slowDisk = new Proxy(real, {
      get(target, key) {
        if (key === "receive") return async (id: string, perception: unknown) => (await writeGate.promise, target.receive(id, perception));
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const main: MentalProcess = async ({ workingMemory }) => {
      started.resolve();
      await turnGate.promise;
      useActions().speak(`echo: ${usePerceptions().invokingPerception.content}`);
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "I", persona: "", initialProcess: main, processes: { main } }), id: "i1", store: slowDisk });
    let resolved = false;
    const perceiving = soul.perceive({ ...said("hello"), id: "p-1" }).then((r) => ((resolved = true), r));
    await Promise.race([started.promise, sleep(2_000).then(() => Promise.reject(new Error("the turn waited for the inbox write")))]);
    expect(resolved).toBe(false);
    expect(real.inboxEntry("p-1")).toBeUndefined();
    writeGate.resolve();
    expect(await perceiving).toEqual({ accepted: true, id: "p-1" });
    expect(real.inboxEntry("p-1")).toMatchObject({ status: "pending" });
    turnGate.resolve();
    await soul.idle();
    expect(real.inboxEntry("p-1")).toMatchObject({ status: "done" });
    expect(real.loadState()).toMatchObject({ turn: 1 });
    await soul.stop();
  });

  it("takes a copy sent while the first is still being written as a duplicate, and runs the turn once", async () => {
    const runs: string[] = [];
    const soul = observedSoul("i2", runs);
    const words = record(soul);
    const [first, second] = await Promise.all([soul.perceive({ ...said("once"), id: "p-2" }), soul.perceive({ ...said("once"), id: "p-2" })]);
    expect(first).toEqual({ accepted: true, id: "p-2" });
    expect(second).toEqual({ accepted: false, id: "p-2", reason: "duplicate" });
    await soul.idle();
    expect(runs).toHaveLength(1);
    expect(words.said()).toEqual(["echo: once"]);
    await soul.stop();
  });

  it("keeps call order when later perceptions must wait for their write (a repeat of one under way)", async () => {
    const runs: string[] = [];
    const soul = observedSoul("i3", runs);
    const results = await Promise.all([
      soul.perceive({ ...said("a"), id: "p-a" }),
      soul.perceive({ ...said("a"), id: "p-a" }),
      soul.perceive({ ...said("b"), id: "p-b" }),
      soul.perceive({ ...said("c"), id: "p-c" }),
    ]);
    expect(results.map((r) => r.accepted)).toEqual([true, false, true, true]);
    await soul.idle();
    expect(runs).toEqual(["p-a", "p-b", "p-c"]);
    await soul.stop();
  });

  it("refuses an id the inbox cannot key before any turn runs", async () => {
    const runs: string[] = [];
    const soul = observedSoul("i4", runs);
    await expect(soul.perceive({ ...said("bad"), id: "line\nbreak" })).rejects.toThrow(/control characters/);
    await soul.idle();
    expect(runs).toEqual([]);
    await soul.stop();
  });
});
