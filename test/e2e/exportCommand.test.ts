/**
 * `ensoul export` as a user runs it: the real binary, a machine's JSON on stdout or in a file,
 * for a shipped soul, a soul from a path, a daimon and the bridge; an unknown name and a path
 * that is not a soul give one clear line.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createActor, createMachine } from "xstate";
import type { MachineJson } from "../../runtime/inspect/index.ts";
import { bridgeMachineJson, daimonMachineJson, soulMachineJson } from "../../runtime/inspect/index.ts";
import { builtinDaimons, builtinSouls } from "../../souls/index.ts";
import { repoRoot, runEnsoul } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs("ensoul-export-");
afterAll(() => dirs.cleanup());

const soulApi = pathToFileURL(join(repoRoot, "actors/soul/index.ts")).href;

/** A soul folder as a user writes one (as `ensoul init` makes it: ES modules), with two processes. */
function writeAda(dir: string): void {
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  const folder = join(dir, "souls", "ada");
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, "index.ts"),
    `import { defineSoul, type MentalProcess } from ${JSON.stringify(soulApi)};
const listening: MentalProcess = async ({ workingMemory }) => workingMemory;
const explaining: MentalProcess = async ({ workingMemory }) => workingMemory;
export default defineSoul({
  name: "Ada",
  persona: "# Ada\\nA patient tutor.",
  initialProcess: listening,
  processes: { listening: { process: listening, next: ["explaining"] }, explaining: { process: explaining, next: ["listening"] } },
});
`,
  );
}

const lines = (text: string) => text.trim().split("\n");

// Each run starts the CLI from the sources (tsx): seconds each on a busy two-core machine.
describe("ensoul export", { timeout: 120_000 }, () => {
  it("writes a shipped soul's machine to stdout, and nothing else", async () => {
    const result = await runEnsoul(["export", "samantha"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as MachineJson;
    expect(json).toStrictEqual(soulMachineJson(builtinSouls["samantha"]!));
    expect(Object.keys(json.states!)).toEqual(["greeting", "conversation"]);
    const actor = createActor(createMachine(json)).start();
    actor.send({ type: "process.conversation" });
    expect(actor.getSnapshot().value).toBe("conversation");
    actor.stop();
  });

  it("writes it to --out instead, and says so on stderr", async () => {
    const file = join(dirs.make(), "claudius.machine.json");
    const result = await runEnsoul(["export", "claudius", "--out", file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
    expect(lines(result.stderr)).toEqual([`exported the machine of soul Claudius to ${file}`]);
    const json = JSON.parse(readFileSync(file, "utf8")) as MachineJson;
    expect(json).toStrictEqual(soulMachineJson(builtinSouls["claudius"]!));
    expect(Object.keys(createMachine(json).root.states)).toEqual([...builtinSouls["claudius"]!.processes.keys()]);
  });

  it("exports a soul from a path, as ensoul chat takes it", async () => {
    const dir = dirs.make();
    writeAda(dir);
    const result = await runEnsoul(["export", "./souls/ada"], { cwd: dir });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as MachineJson;
    expect(json.id).toBe("Ada");
    expect(json.initial).toBe("listening");
    expect(json.states!["listening"]!.on).toEqual({ "process.explaining": { target: "explaining" } });
    expect(json.states!["explaining"]!.on).toEqual({ "process.listening": { target: "listening" } });
    expect(Object.keys(createMachine(json).root.states)).toEqual(["listening", "explaining"]);
  });

  it("exports a shipped daimon, the daimon machine and the bridge machine", async () => {
    const [kothar, daimon, bridge] = await Promise.all([runEnsoul(["export", "kothar"]), runEnsoul(["export", "daimon"]), runEnsoul(["export", "bridge"])]);
    for (const r of [kothar, daimon, bridge]) expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(JSON.parse(kothar.stdout)).toStrictEqual(daimonMachineJson(builtinDaimons["kothar"]));
    expect(JSON.parse(daimon.stdout)).toStrictEqual(daimonMachineJson());
    expect(JSON.parse(bridge.stdout)).toStrictEqual(bridgeMachineJson());
  });

  it("refuses an unknown soul and a path that is not a soul, in one line", async () => {
    const unknown = await runEnsoul(["export", "nobody"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe("");
    expect(lines(unknown.stderr)).toEqual([expect.stringMatching(/^ensoul: unknown soul 'nobody'; .*\(samantha, claudius\).*\(kothar\), daimon, bridge/)]);

    const missing = await runEnsoul(["export", "./souls/nobody"], { cwd: dirs.make() });
    expect(missing.code).toBe(2);
    expect(lines(missing.stderr)).toEqual(["ensoul: ./souls/nobody is not a soul: no such file or folder"]);
  });
});
