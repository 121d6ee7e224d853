/**
 * useUserModels(): versions buffered in the turn draft, committed in the turn's own LMDB
 * transaction under runtime/store's user-model keys, so `userModels(store, id)` reads them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryActorStore, createSoul, defineSoul, useActions, usePerceptions, useUserModels, type MentalProcess } from "../../../actors/soul/index.ts";
import { openStore, userModels, type Store } from "../../../runtime/store/index.ts";
import { record, said } from "../../support/soul/helpers.ts";

let dir: string | undefined;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const observed: string[] = [];
const keeper: MentalProcess = async ({ workingMemory }) => {
  const { invokingPerception: p } = usePerceptions();
  const models = useUserModels();
  const before = models.latest(p.name)?.version ?? 0;
  const saved = models.save(p.name, `# ${p.name}\n\n${p.content}`, `Heard: ${p.content}`);
  // The turn sees its own pending save before anything is committed.
  observed.push(`before=${before} saved=${saved.version} latest=${models.latest(p.name)?.version} history=${models.history(p.name).length}`);
  if (p.content.includes("boom")) throw new Error("boom after saving");
  useActions().speak(`v${saved.version}`);
  return workingMemory;
};
const blueprint = defineSoul({ name: "Keeper", persona: "keeps models", initialProcess: keeper, processes: { keeper } });

describe("useUserModels", () => {
  it("commits versions with the turn, saves nothing from a turn that throws, and keeps them across a restart", async () => {
    observed.length = 0;
    dir = mkdtempSync(join(tmpdir(), "ensoul-um-"));
    store = openStore({ path: dir, noSync: true });
    const first = createSoul({ blueprint, id: "k", store: store.actor("k") });
    const log = record(first);
    await first.perceive(said("restores planes", "Tom"));
    await first.idle();
    await first.perceive(said("boom", "Tom"));
    await first.idle();
    await first.perceive(said("sharpens freehand", "Tom"));
    await first.idle();
    expect(log.said()).toEqual(["v1", "v2"]);
    expect(log.errors().join("\n")).toContain("boom after saving");
    expect(observed[0]).toBe("before=0 saved=1 latest=1 history=1");
    // The failed turn saw its pending v2; it never landed, so the next turn's save is v2 again.
    expect(observed[1]).toBe("before=1 saved=2 latest=2 history=2");
    expect(observed[2]).toBe("before=1 saved=2 latest=2 history=2");
    await first.stop();
    await store.close();

    store = openStore({ path: dir, noSync: true });
    const tom = userModels(store, "k").forUser("Tom").history();
    expect(tom.map((v) => [v.version, v.changeNote])).toEqual([
      [1, "Heard: restores planes"],
      [2, "Heard: sharpens freehand"],
    ]);
    expect(tom[1].markdown).toBe("# Tom\n\nsharpens freehand");
    const second = createSoul({ blueprint, id: "k", store: store.actor("k") });
    await second.perceive(said("third", "Tom"));
    await second.idle();
    expect(observed[3]).toBe("before=2 saved=3 latest=3 history=3");
    await second.stop();
    expect(userModels(store, "k").forUser("Tom").latest()?.version).toBe(3);
  });

  it("works on the in-memory actor store too", async () => {
    observed.length = 0;
    const actor = createMemoryActorStore("m");
    const soul = createSoul({ blueprint, id: "m", store: actor });
    await soul.perceive(said("one", "Ann"));
    await soul.idle();
    await soul.perceive(said("two", "Ann"));
    await soul.idle();
    expect(actor.kvRange?.("userModels", ["Ann"]).map((e) => e.key)).toEqual([
      ["Ann", 1],
      ["Ann", 2],
    ]);
    await soul.stop();
  });
});
