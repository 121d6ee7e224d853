/**
 * The cluster config: YAML and TypeScript files, and every mistake reported as one line
 * naming the file and the field.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadClusterConfig, parseClusterConfig, resolveDaimon, soulsFor, startNode, type ClusterConfigInput } from "../../../runtime/node/index.ts";
import { builtinSouls } from "../../../souls/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());
const root = join(import.meta.dirname, "..", "..", "..");
const knownSouls = Object.keys(builtinSouls).join(", ");

function problem(raw: unknown, file = "cluster.yaml"): string {
  try {
    parseClusterConfig(raw, file);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("the config was accepted");
}

const base = { cluster: "c", souls: [{ id: "sam", blueprint: "samantha" }] };
const withSouls = (souls: unknown[], extra: Record<string, unknown> = {}) => ({ ...base, souls, ...extra });

describe("cluster config validation", () => {
  it("names the file and the field of an unknown soul blueprint", () => {
    expect(problem(withSouls([{ id: "a", blueprint: "samantha" }, { id: "b", blueprint: "x" }]))).toBe(`cluster.yaml: souls[1].blueprint: unknown soul 'x' (builtin: ${knownSouls}; your own soul: a path such as ./souls/x)`);
  });

  it.each([
    [{ cluster: "c" }, "cluster.yaml: souls: required"],
    [withSouls([]), "cluster.yaml: souls: a cluster needs at least one soul"],
    [withSouls([{ id: "a b", blueprint: "samantha" }]), "cluster.yaml: souls[0].id: may contain only A-Z a-z 0-9 _ - (1 to 128 characters)"],
    [withSouls([{ id: "a", blueprint: "samantha", nod: "x" }]), "cluster.yaml: souls[0].nod: unknown field"],
    [{ ...base, colour: "blue" }, "cluster.yaml: colour: unknown field"],
    [withSouls([{ id: "a", blueprint: "samantha" }, { id: "a", blueprint: "samantha" }]), "cluster.yaml: souls[1].id: duplicate soul id 'a'"],
    [withSouls([{ id: "a", blueprint: "samantha", node: "c" }], { nodes: ["a", "b"] }), "cluster.yaml: souls[0].node: unknown node 'c' (nodes: a, b)"],
    [withSouls([{ id: "a", blueprint: "samantha", hears: ["a"] }]), "cluster.yaml: souls[0].hears[0]: a soul cannot hear itself ('a')"],
    [withSouls([{ id: "a", blueprint: "samantha", hears: ["z"] }]), "cluster.yaml: souls[0].hears[0]: unknown soul 'z' (souls in this config: a)"],
    [{ ...base, daimons: [{ soul: "sam", name: "K", persona: "p", mode: "loud" }] }, /^cluster\.yaml: daimons\[0\]\.mode: .*"whisper"/],
    [{ ...base, daimons: [{ soul: "sam", name: "K", mode: "off" }] }, "cluster.yaml: daimons[0].persona: needs a persona or a personaFile (or a builtin daimon)"],
    [{ ...base, daimons: [{ soul: "sam", persona: "p", mode: "off" }] }, "cluster.yaml: daimons[0].name: required (or name a builtin daimon with builtin:)"],
    [{ ...base, daimons: [{ soul: "sam", builtin: "loki" }] }, "cluster.yaml: daimons[0].builtin: unknown daimon 'loki' (known: kothar)"],
    [{ ...base, daimons: [{ soul: "nobody", name: "K", persona: "p", mode: "off" }] }, "cluster.yaml: daimons[0].soul: unknown soul 'nobody' (souls in this config: sam)"],
    [{ ...base, gates: [{ builtin: "moat" }] }, 'cluster.yaml: gates[0].builtin: unknown builtin gate "moat" (known: bouncer, length, budget, approval)'],
    [{ ...base, gates: [{ remote: "tone" }] }, "cluster.yaml: gates[0].priority: required"],
    [{ ...base, gates: [{ builtin: "length", options: { maxChars: -1 } }] }, /^cluster\.yaml: gates\[0\]\.options\.maxChars: /],
    [{ ...base, gates: [{ priority: 3 }] }, /^cluster\.yaml: gates\[0\]: must name a gate/],
    [{ ...base, gates: [{ builtin: "bouncer", souls: ["x"] }] }, "cluster.yaml: gates[0].souls[0]: unknown soul 'x' (souls in this config: sam)"],
    [{ ...base, skillGates: [{ skill: "tone", gate: { remote: "other", priority: 1 } }] }, /^cluster\.yaml: skillGates\[0\]\.gate: must name a gate: 'builtin/],
    [{ ...base, nodes: ["a"], skillGates: [{ skill: "tone", node: "b", gate: { builtin: "length" } }] }, "cluster.yaml: skillGates[0].node: unknown node 'b' (nodes: a)"],
    [{ ...base, providers: { default: "gpt4" } }, /^cluster\.yaml: providers\.default: Malformed model name 'gpt4'/],
    [{ ...base, providers: { souls: { ghost: "offline:echo" } } }, "cluster.yaml: providers.souls.ghost: unknown soul 'ghost' (souls in this config: sam)"],
    [{ ...base, bridges: [{ type: "telegraph", soul: "sam" }] }, /^cluster\.yaml: bridges\[0\]\.type: /],
    [{ ...base, runtime: { heartbeatMs: 5 } }, /^cluster\.yaml: runtime\.heartbeatMs: /],
    [{ ...base, runtime: { maxQueued: 0 } }, /^cluster\.yaml: runtime\.maxQueued: /],
    [withSouls([{ id: "a", blueprint: "samantha", maxQueued: 1.5 }]), /^cluster\.yaml: souls\[0\]\.maxQueued: /],
  ] as [ClusterConfigInput, string | RegExp][])("%#: %s", (raw, expected) => {
    const message = problem(raw);
    if (typeof expected === "string") expect(message).toBe(expected);
    else expect(message).toMatch(expected);
    expect(message.split("\n")).toHaveLength(1);
  });

  it("takes a builtin daimon by name, with its persona and rhythm unless the config says otherwise", () => {
    const config = parseClusterConfig({ ...base, daimons: [{ soul: "sam", builtin: "kothar", mode: "off" }] });
    const kothar = resolveDaimon(config.daimons[0]);
    expect(kothar).toMatchObject({ soul: "sam", name: "Kothar", mode: "off", everyN: 3 });
    expect(kothar.persona).toMatch(/Kothar/);
  });

  it("fills in defaults and places souls on nodes (unassigned ones on the first node)", () => {
    const config = parseClusterConfig(withSouls([{ id: "a", blueprint: "samantha", node: "y" }, { id: "b", blueprint: "samantha" }], { nodes: ["x", "y"] }));
    expect(config.runtime).toMatchObject({ heartbeatMs: 1000, ackWaitMs: 30_000, maxInFlight: 256, maxQueued: 1_000 });
    expect(soulsFor(config, "x", "assigned").map((s) => s.id)).toEqual(["b"]);
    expect(soulsFor(config, "y", "assigned").map((s) => s.id)).toEqual(["a"]);
    expect(soulsFor(config, "x", "all").map((s) => s.id)).toEqual(["a", "b"]);
  });
});

describe("cluster config files", () => {
  it("loads the shipped examples", async () => {
    const one = await loadClusterConfig(join(root, "examples", "cluster.yaml"));
    expect(one.config.cluster).toBe("demo");
    expect(resolveDaimon(one.config.daimons[0])).toMatchObject({ soul: "claudius", name: "Kothar", persona: expect.stringMatching(/Kothar/) });
    const two = await loadClusterConfig(join(root, "examples", "two-nodes.yaml"));
    expect(two.personas.get(0)).toMatch(/Kothar/);
    expect(two.config.nodes).toEqual(["a", "b"]);
    expect(soulsFor(two.config, "a", "assigned").map((s) => s.id)).toEqual(["ada", "cy"]);
    expect(soulsFor(two.config, "b", "assigned").map((s) => s.id)).toEqual(["bea", "claudius"]);
    expect(resolveDaimon(two.config.daimons[1])).toMatchObject({ soul: "claudius", name: "Kothar", mode: "whisper", everyN: 2 });
  });

  it("loads a TypeScript config with blueprint and gate objects", async () => {
    const loaded = await loadClusterConfig(join(root, "test", "support", "cluster", "echoCluster.config.ts"));
    expect(loaded.config.cluster).toBe("typed");
    expect(typeof loaded.config.souls[0].blueprint).toBe("object");
  });

  it("names the file for YAML it cannot parse, a missing file and a missing persona file", async () => {
    const dir = dirs.make();
    writeFileSync(join(dir, "broken.yaml"), "cluster: c\nsouls:\n  - id: a\n   blueprint: samantha\n");
    await expect(loadClusterConfig("broken.yaml", dir)).rejects.toThrow(/^broken\.yaml: not valid YAML \(line 4, column \d+\): /);
    await expect(loadClusterConfig("absent.yaml", dir)).rejects.toThrow("absent.yaml: no such file");
    writeFileSync(join(dir, "persona.yaml"), "souls: [{ id: a, blueprint: samantha }]\ndaimons: [{ soul: a, name: K, personaFile: k.md, mode: off }]\n");
    await expect(loadClusterConfig("persona.yaml", dir)).rejects.toThrow("persona.yaml: daimons[0].personaFile: cannot read k.md (ENOENT)");
    writeFileSync(join(dir, "bad.yaml"), "souls:\n  - id: a\n    blueprint: samantha\n  - id: b\n    blueprint: x\n");
    await expect(loadClusterConfig("bad.yaml", dir)).rejects.toThrow(`bad.yaml: souls[1].blueprint: unknown soul 'x' (builtin: ${knownSouls}; your own soul: a path such as ./souls/x)`);
  });

  it("refuses, at start, a model whose provider has no key", async () => {
    const config = parseClusterConfig({ ...base, providers: { default: "anthropic:claude-x" } });
    await expect(startNode({ config, data: dirs.make(), env: {}, log: () => undefined })).rejects.toThrow(/^providers\.default: Unknown model provider 'anthropic'/);
  });

  it("needs --node on a shared bus when the config names several nodes", async () => {
    const { createInProcessBus } = await import("../../../runtime/bus/index.ts");
    const bus = createInProcessBus({ cluster: "c" });
    const config = parseClusterConfig({ ...base, nodes: ["a", "b"] });
    await expect(startNode({ config, bus, data: dirs.make(), log: () => undefined })).rejects.toThrow("this config spreads souls over nodes a, b: say which one this is (--node <name>)");
    await bus.close();
  });
});
