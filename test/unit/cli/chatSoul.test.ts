/**
 * Which soul `ensoul chat <soul>` runs: a shipped soul by its id, and any other id a soul
 * already in `<data>/local`, run with the shipped blueprint it was made with (what its soul
 * file records). A soul imported with `--as claudius2` is chatted with as `claudius2`.
 * The real binary runs one in test/e2e/soulFile.test.ts.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { soulToChat } from "../../../runtime/cli/chatSoul.ts";
import { openStore, type ActorState } from "../../../runtime/store/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-chatsoul-");
afterEach(() => dirs.cleanup());

const state = (soulName: string): ActorState => ({
  workingMemory: { soulName, regionOrder: [], memories: [{ id: "m1", role: "user", content: "tom said: hi", timestamp: 1 }] },
  soulMemory: {},
  processMemory: {},
  currentProcess: "main",
  invocationCounts: { main: 1 },
  turn: 1,
});

/** A data directory whose `local` node holds these souls, each made with the blueprint named. */
async function dataWith(souls: Record<string, string>): Promise<string> {
  const data = dirs.make();
  const store = openStore({ path: join(data, "local"), noSync: true });
  for (const [id, blueprint] of Object.entries(souls)) await store.actor(id).commitTurn({ state: state(blueprint) });
  await store.close();
  return data;
}

describe("the soul ensoul chat runs", () => {
  it("runs a soul imported under a new id with the shipped blueprint its file recorded", async () => {
    const data = await dataWith({ claudius2: "Claudius", sam2: "Samantha" });
    expect(await soulToChat("claudius2", data)).toMatchObject({ id: "claudius2", blueprint: { name: "Claudius" } });
    expect(await soulToChat("sam2", data)).toMatchObject({ id: "sam2", blueprint: { name: "Samantha" } });
    // A shipped soul's id is that soul, with or without data.
    expect(await soulToChat("claudius", dirs.make())).toMatchObject({ id: "claudius", blueprint: { name: "Claudius" } });
  });

  it("an id in neither place is one line naming the shipped souls and those in the data directory", async () => {
    const data = await dataWith({ claudius2: "Claudius" });
    await expect(soulToChat("nobody", data)).rejects.toThrow(
      `unknown soul 'nobody'; the souls that ship with ensoul are: samantha, claudius; souls in ${join(data, "local")}: claudius2; and your own is a path (ensoul chat ./souls/nobody)`,
    );
    await expect(soulToChat("nobody", dirs.make())).rejects.toThrow(/^unknown soul 'nobody'; the souls that ship with ensoul are: samantha, claudius; and your own is a path/);
  });

  it("a soul made with a blueprint that does not ship says how to run it", async () => {
    const data = await dataWith({ ada2: "Ada" });
    await expect(soulToChat("ada2", data)).rejects.toThrow(/^soul 'ada2' in .*local is a soul of blueprint Ada, which does not ship with ensoul: run it with its blueprint from a cluster config/);
  });
});
