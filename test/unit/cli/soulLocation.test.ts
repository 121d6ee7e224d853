/**
 * A data directory holding one soul id on several nodes (README's demo in `local`, then its
 * two-node section in `a` and `b`): `ensoul memory` and `ensoul soul export` must not read
 * whichever node comes first. They refuse, list each node's copy with its last turn and its
 * time, and say how to choose (`--node`); with `--node` they read that node's copy.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { memoryCommand, userModelsCommand } from "../../../runtime/cli/memoryCommand.ts";
import { soulExportCommand } from "../../../runtime/cli/soulCommand.ts";
import { openStore, userModels, type ActorState } from "../../../runtime/store/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { textSink as sink } from "../../support/textSink.ts";

const dirs = tempDirs("ensoul-soulloc-");
afterEach(() => dirs.cleanup());

const T0 = Date.UTC(2026, 0, 2, 10, 0, 0);

const state = (turn: number, at: number): ActorState => ({
  workingMemory: {
    soulName: "Claudius",
    regionOrder: [],
    memories: [
      { id: `u${turn}`, role: "user", content: `tom said: turn ${turn}`, timestamp: at - 1000 },
      { id: `a${turn}`, role: "assistant", content: `Claudius said: reply ${turn}`, timestamp: at },
    ],
  },
  soulMemory: {},
  processMemory: {},
  currentProcess: "main",
  invocationCounts: { main: turn },
  turn,
});

/** Node `node` of `data` holds claudius at `turn`, its last memory at `at`. */
async function put(data: string, node: string, turn: number, at: number, user?: string): Promise<void> {
  const store = openStore({ path: join(data, node), noSync: true });
  await store.actor("claudius").commitTurn({ state: state(turn, at) });
  if (user !== undefined) await userModels(store, "claudius").forUser(user).save(`# ${user} on ${node}`, `met on ${node}`);
  await store.close();
}

/** README's data directory after the demo (local, turn 15) and the two-node section (b, turn 4; a has another soul). */
async function readmeData(): Promise<string> {
  const data = dirs.make();
  await put(data, "local", 15, T0 + 3_600_000, "Tom");
  await put(data, "b", 4, T0, "Tom");
  const a = openStore({ path: join(data, "a"), noSync: true });
  await a.actor("ada").commitTurn({ state: { ...state(1, T0), currentProcess: "conversation" } });
  await a.close();
  return data;
}

const REFUSAL = (command: string) =>
  new RegExp(
    "^soul 'claudius' is on 2 nodes in .*, as different souls: " +
      "node b \\(turn 4, last turn at 2026-01-02T10:00:00Z\\), node local \\(turn 15, last turn at 2026-01-02T11:00:00Z\\); " +
      `say which: ${command} claudius --node <node>$`,
  );

describe("a soul on several nodes of one data directory", () => {
  it("ensoul soul export refuses, listing each node with its last turn and time, and exports the one --node names", async () => {
    const data = await readmeData();
    const out = sink();
    await expect(soulExportCommand({ soul: "claudius", data, stdout: out })).rejects.toThrow(REFUSAL("ensoul soul export"));
    expect(out.text()).toBe("");
    const local = await soulExportCommand({ soul: "claudius", data, node: "local", stdout: sink() });
    expect(local.state.turn).toBe(15);
    const b = await soulExportCommand({ soul: "claudius", data, node: "b", stdout: sink() });
    expect(b.state.turn).toBe(4);
  });

  it("ensoul soul export with a cluster config reads the node the config runs the soul on; under automatic placement it refuses", async () => {
    const data = await readmeData();
    const dir = dirs.make();
    const twoNodes = join(dir, "two-nodes.yaml");
    writeFileSync(twoNodes, `cluster: duo\ndata: ${data}\nnodes: [a, b]\nsouls:\n  - { id: claudius, blueprint: claudius, node: b }\n`);
    expect((await soulExportCommand({ soul: "claudius", config: twoNodes, stdout: sink() })).state.turn).toBe(4);
    const demo = join(dir, "demo.yaml");
    writeFileSync(demo, `cluster: demo\ndata: ${data}\nsouls:\n  - { id: claudius, blueprint: claudius }\n`);
    expect((await soulExportCommand({ soul: "claudius", config: demo, stdout: sink() })).state.turn).toBe(15);
    const auto = join(dir, "auto.yaml");
    writeFileSync(auto, `cluster: moving\ndata: ${data}\nplacement: auto\nsouls:\n  - { id: claudius, blueprint: claudius }\n`);
    await expect(soulExportCommand({ soul: "claudius", config: auto, stdout: sink() })).rejects.toThrow(REFUSAL("ensoul soul export"));
  });

  it("ensoul memory refuses the same way, and reads the node --node names", async () => {
    const data = await readmeData();
    await expect(memoryCommand({ soul: "claudius", cluster: "local", data, out: sink() })).rejects.toThrow(REFUSAL("ensoul memory"));
    const reply = await memoryCommand({ soul: "claudius", cluster: "local", data, node: "local", out: sink() });
    expect(reply).toMatchObject({ node: "local", turns: 15 });
    const fromB = await memoryCommand({ soul: "claudius", cluster: "local", data, node: "b", out: sink() });
    expect(fromB).toMatchObject({ node: "b", turns: 4 });
  });

  it("ensoul memory --user refuses the same way, and shows the model kept on the node --node names", async () => {
    const data = await readmeData();
    await expect(userModelsCommand({ soul: "claudius", cluster: "local", data, user: "Tom", out: sink() })).rejects.toThrow(REFUSAL("ensoul memory"));
    const shown = sink();
    const report = await userModelsCommand({ soul: "claudius", cluster: "local", data, node: "b", user: "Tom", out: shown });
    expect(report.node).toBe("b");
    expect(report.history?.map((v) => v.markdown)).toEqual(["# Tom on b"]);
  });

  it("a soul on one node only is read from it, as before; an unknown node or soul is one clear line", async () => {
    const data = await readmeData();
    const ada = await memoryCommand({ soul: "ada", cluster: "local", data, out: sink() });
    expect(ada).toMatchObject({ node: "a", turns: 1 });
    expect((await soulExportCommand({ soul: "ada", data, stdout: sink() })).state.turn).toBe(1);
    await expect(memoryCommand({ soul: "claudius", cluster: "local", data, node: "c", out: sink() })).rejects.toThrow(`no LMDB data for node c in ${join(data, "c")}`);
    await expect(memoryCommand({ soul: "ada", cluster: "local", data, node: "b", out: sink() })).rejects.toThrow(/^unknown soul 'ada' in .* \(souls there: claudius\)$/);
  });
});
