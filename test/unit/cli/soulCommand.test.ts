/**
 * `ensoul soul export|import` in process, with cluster configs: where the soul is read from
 * and written to, and the checks a config makes possible (the soul is in it, with a blueprint
 * of the file's blueprint name). The real binary is exercised in test/e2e/soulFile.test.ts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { soulExportCommand, soulImportCommand } from "../../../runtime/cli/soulCommand.ts";
import { openStore, userModels, type ActorState } from "../../../runtime/store/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { textSink as sink } from "../../support/textSink.ts";

const dirs = tempDirs("ensoul-soulcmd-");
afterEach(() => dirs.cleanup());

const state = (turn: number): ActorState => ({
  workingMemory: { soulName: "Samantha", regionOrder: [], memories: [{ id: "m1", role: "user", content: "ada said: hi", timestamp: 1 }] },
  soulMemory: {},
  processMemory: {},
  currentProcess: "conversation",
  invocationCounts: { conversation: turn },
  turn,
});

/** A data directory whose node `node` holds soul `id` at `turn`. */
async function dataWith(id: string, node: string, turn = 2): Promise<string> {
  const data = dirs.make();
  const store = openStore({ path: join(data, node), noSync: true });
  await store.actor(id).commitTurn({ state: state(turn) });
  await store.close();
  return data;
}

function config(dir: string, yaml: string): string {
  const file = join(dir, "ensoul.yaml");
  writeFileSync(file, yaml);
  return file;
}

describe("ensoul soul export / import with a cluster config", () => {
  it("reads the config's data directory and names the config's blueprint", async () => {
    const data = await dataWith("sam", "local");
    const file = config(dirs.make(), `cluster: one\ndata: ${data}\nsouls:\n  - id: sam\n    blueprint: samantha\n`);
    const out = join(dirs.make(), "sam.json");
    const exported = await soulExportCommand({ soul: "sam", config: file, out, stdout: sink() });
    expect(exported.soul).toEqual({ id: "sam", blueprint: { name: "Samantha" } });
    expect(exported.state.turn).toBe(2);
  });

  it("imports into the node the config places the soul on", async () => {
    const source = await dataWith("sam", "local");
    const out = join(dirs.make(), "sam.json");
    await soulExportCommand({ soul: "sam", data: source, out, stdout: sink() });
    const target = dirs.make();
    const file = config(dirs.make(), `cluster: two\ndata: ${target}\nnodes: [a, b]\nsouls:\n  - id: sam\n    blueprint: samantha\n    node: b\n`);
    const said = sink();
    const result = await soulImportCommand({ file: out, config: file, stdout: said });
    expect(result.dir).toBe(join(target, "b"));
    expect(said.text()).toMatch(/^imported soul sam into .*\/b \(node b\): blueprint Samantha, turn 2/);
    const store = openStore({ path: join(target, "b"), reader: true });
    expect(store.actor("sam").loadState()?.turn).toBe(2);
    await store.close();
  });

  it("refuses a soul the config does not have, or runs with another blueprint", async () => {
    const source = await dataWith("sam", "local");
    const out = join(dirs.make(), "sam.json");
    await soulExportCommand({ soul: "sam", data: source, out, stdout: sink() });
    const file = config(dirs.make(), `cluster: one\nsouls:\n  - id: sam\n    blueprint: claudius\n  - id: other\n    blueprint: samantha\n`);
    await expect(soulImportCommand({ file: out, config: file, data: dirs.make(), stdout: sink() })).rejects.toThrow(
      `${out} is a soul of blueprint Samantha, but ${file} runs 'sam' as Claudius`,
    );
    await expect(soulImportCommand({ file: out, config: file, as: "nobody", data: dirs.make(), stdout: sink() })).rejects.toThrow(
      `${file} has no soul 'nobody' (its souls: sam, other)`,
    );
    const imported = await soulImportCommand({ file: out, config: file, as: "other", data: dirs.make(), stdout: sink() });
    expect(imported.soulId).toBe("other");
  });

  it("refuses over records of that id that are not a soul's state, saying --force replaces them", async () => {
    const source = await dataWith("sam", "local");
    const out = join(dirs.make(), "sam.json");
    await soulExportCommand({ soul: "sam", data: source, out, stdout: sink() });
    const target = dirs.make();
    const store = openStore({ path: join(target, "local"), noSync: true });
    await userModels(store, "sam").forUser("ada").save("# Ada", "met");
    await store.close();
    await expect(soulImportCommand({ file: out, data: target, stdout: sink() })).rejects.toThrow(
      /cannot import .*: actor sam already has data in this store \(1 kv entry\); refusing to overwrite it; --force replaces it/,
    );
    const replaced = sink();
    await soulImportCommand({ file: out, data: target, force: true, stdout: replaced });
    expect(replaced.text()).toMatch(/^imported soul sam into .*local \(node local\), replacing what it had there \(1 kv entry\): blueprint Samantha/);
  });

  it("refuses an --as that is not a soul id", async () => {
    const source = await dataWith("sam", "local");
    const out = join(dirs.make(), "sam.json");
    await soulExportCommand({ soul: "sam", data: source, out, stdout: sink() });
    await expect(soulImportCommand({ file: out, as: "no/slash", data: dirs.make(), stdout: sink() })).rejects.toThrow(/--as: 'no\/slash' is not a soul id/);
  });
});
