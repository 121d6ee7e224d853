/**
 * `ensoul soul export` and `ensoul soul import` as a user runs them: the real binary in child
 * processes, on the offline model. A conversation in one data directory is exported, imported
 * into a fresh one, and `ensoul chat` there continues it; an import is refused over an
 * existing soul and while a process holds the directory; an unknown soul and a file that is
 * not a soul file get one clear line.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { soulExportCommand, soulImportCommand } from "../../runtime/cli/soulCommand.ts";
import { openStore } from "../../runtime/store/index.ts";
import { runEnsoul, startEnsoul } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs("ensoul-soul-cli-");
afterAll(() => dirs.cleanup());

interface Exported {
  format: string;
  soul: { id: string; blueprint: { name: string } };
  state: { turn: number; currentProcess: string; invocationCounts: Record<string, number>; workingMemory: { memories: { content: string }[] } };
}

const oneLine = (stderr: string) => stderr.trim().split("\n");
const quiet = () => new Writable({ write: (_chunk, _enc, done) => done() });

describe("ensoul soul export / import", () => {
  it("moves a soul to a fresh data directory, where ensoul chat continues the conversation", { timeout: 180_000 }, async () => {
    const first = dirs.make();
    const chat = await runEnsoul(["chat", "samantha", "--data", first], { lines: ["hello there", "my favourite tea is oolong"] });
    expect(chat.code).toBe(0);

    const file = join(dirs.make(), "samantha.soul.json");
    const exported = await runEnsoul(["soul", "export", "samantha", "--data", first, "--out", file]);
    expect(exported.stderr).toBe("");
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(/^exported soul samantha from .*local to .*samantha\.soul\.json: blueprint Samantha, turn 2, process conversation/);
    const doc = JSON.parse(readFileSync(file, "utf8")) as Exported;
    expect(doc.format).toBe("ensoul-soul");
    expect(doc.state.turn).toBe(2);

    const second = dirs.make();
    const imported = await runEnsoul(["soul", "import", file, "--data", second]);
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain(`imported soul samantha into ${join(second, "local")} (node local)`);

    const again = await runEnsoul(["soul", "import", file, "--data", second]);
    expect(again.code).toBe(2);
    expect(oneLine(again.stderr)).toEqual([
      expect.stringMatching(/^ensoul: soul 'samantha' already exists in .* \(turn 2, process conversation\); --force replaces it/),
    ]);

    // A chat on the new directory continues the soul; while it runs, an import there is refused.
    const running = startEnsoul(["chat", "samantha", "--data", second]);
    try {
      await running.waitFor(/memory in /);
      running.type("do you still know me?");
      await running.waitFor(/Samantha: [^\n]*do you still know me/);
      const refused = await runEnsoul(["soul", "import", file, "--data", second, "--as", "sam2", "--force"]);
      expect(refused.code).toBe(1);
      expect(oneLine(refused.stderr)).toEqual([expect.stringMatching(/^ensoul: cannot import into .*local: data directory .* is in use by process \d+ \(.*chat/)]);
    } finally {
      running.child.stdin.end();
    }
    expect((await running.exited).code).toBe(0);

    // Without --out the document goes to stdout, and nothing else does.
    const after = await runEnsoul(["soul", "export", "samantha", "--data", second]);
    expect(after.code).toBe(0);
    const moved = JSON.parse(after.stdout) as Exported;
    expect(moved.state.turn).toBe(3);
    expect(moved.state.invocationCounts.greeting).toBe(1);
    const said = moved.state.workingMemory.memories.map((m) => m.content).join("\n");
    for (const line of ["hello there", "my favourite tea is oolong", "do you still know me?"]) expect(said).toContain(line);
    expect(moved.state.workingMemory.memories.slice(0, doc.state.workingMemory.memories.length)).toEqual(doc.state.workingMemory.memories);

    const unknown = await runEnsoul(["soul", "export", "nobody", "--data", second]);
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown.stderr)).toEqual([expect.stringMatching(/^ensoul: unknown soul 'nobody' in .* \(souls there: samantha\)$/)]);
  });

  it("a soul imported under another id (--as claudius2) is chatted with under that id, as the blueprint its file records", { timeout: 120_000 }, async () => {
    const data = dirs.make();
    expect((await runEnsoul(["chat", "claudius", "--data", data], { lines: ["I restore hand planes."] })).code).toBe(0);
    // Moved in this process (the binary's export and import are the test above): the chat is what is under test.
    const file = join(dirs.make(), "claudius.soul.json");
    await soulExportCommand({ soul: "claudius", data, out: file, stdout: quiet() });
    await soulImportCommand({ file, data, as: "claudius2", stdout: quiet() });

    const chat = await runEnsoul(["chat", "claudius2", "--data", data], { lines: ["Do you remember my hobby?"] });
    expect(chat.stderr).toBe("");
    expect(chat.code).toBe(0);
    expect(chat.stdout).toMatch(/^Claudius · offline:\S+ .* · memory in /m);
    expect(chat.stdout).toMatch(/^Claudius: /m);
    const store = openStore({ path: join(data, "local"), reader: true });
    try {
      const state = store.actor("claudius2").loadState()!;
      expect(state.turn).toBe(2);
      const said = (state.workingMemory as Exported["state"]["workingMemory"]).memories.map((m) => m.content).join("\n");
      for (const line of ["I restore hand planes.", "Do you remember my hobby?"]) expect(said).toContain(line);
    } finally {
      await store.close();
    }
  });

  it("a soul id on two nodes of the data directory: ensoul memory refuses with one line listing both, and --node chooses (export too: test/unit/cli/soulLocation.test.ts)", { timeout: 120_000 }, async () => {
    const data = dirs.make();
    for (const [node, turn] of [["local", 15], ["b", 4]] as const) {
      const store = openStore({ path: join(data, node), noSync: true });
      const memories = [{ id: `m${turn}`, role: "user", content: `turn ${turn} on ${node}`, timestamp: Date.UTC(2026, 0, 2, turn) }];
      await store.actor("claudius").commitTurn({ state: { workingMemory: { soulName: "Claudius", regionOrder: [], memories }, soulMemory: {}, processMemory: {}, currentProcess: "main", invocationCounts: {}, turn } });
      await store.close();
    }
    const refused = await runEnsoul(["memory", "claudius", "--data", data]);
    expect(refused.code).toBe(2);
    expect(oneLine(refused.stderr)).toEqual([
      `ensoul: soul 'claudius' is on 2 nodes in ${data}, as different souls: node b (turn 4, last turn at 2026-01-02T04:00:00Z), node local (turn 15, last turn at 2026-01-02T15:00:00Z); say which: ensoul memory claudius --node <node>`,
    ]);
    const chosen = await runEnsoul(["memory", "claudius", "--data", data, "--node", "b", "--json"]);
    expect(chosen.stderr).toBe("");
    expect(JSON.parse(chosen.stdout)).toMatchObject({ node: "b", turns: 4 });
  });

  it("says plainly when a file is not a soul file, or there is no data", { timeout: 60_000 }, async () => {
    const dir = dirs.make();
    const config = join(dir, "ensoul.json");
    writeFileSync(config, JSON.stringify({ cluster: "one", souls: [] }));
    const wrong = await runEnsoul(["soul", "import", config, "--data", dir]);
    expect(wrong.code).toBe(2);
    expect(oneLine(wrong.stderr)).toEqual([`ensoul: ${config} is not a soul file: its "format" is missing, not "ensoul-soul" (write one with ensoul soul export)`]);

    const missing = await runEnsoul(["soul", "import", join(dir, "nope.json"), "--data", dir]);
    expect(oneLine(missing.stderr)).toEqual([`ensoul: no soul file at ${join(dir, "nope.json")}`]);

    const noData = await runEnsoul(["soul", "export", "samantha", "--data", join(dir, "none")]);
    expect(oneLine(noData.stderr)).toEqual([`ensoul: no data directory at ${join(dir, "none")}`]);
  });
});
