/**
 * The machines as `createMachine` JSON (`ensoul export`): for every soul that ships, one state
 * per mental process, one edge per allowed hand-over and no other, the ISM as the child of an
 * ISM process; for the daimon and the bridge, every state and edge of the real machine. All of
 * it is plain JSON that XState takes back as it is, starts, and moves along every edge.
 */
import { createActor, createMachine, initialTransition, transition, type AnyStateMachine, type AnyStateNode, type StateValue } from "xstate";
import { describe, expect, it } from "vitest";
import { daimonMachine } from "../../../actors/daimon/index.ts";
import { isIsmProcess, ismMachine } from "../../../actors/ism/index.ts";
import { bridgeMachine } from "../../../bridges/core/index.ts";
import { bridgeMachineJson, daimonMachineJson, ISM_STATE, processEvent, soulMachineJson, type MachineJson, type StateJson } from "../../../runtime/inspect/index.ts";
import { jsonSafe, targetRef } from "../../../actors/vocabulary/machineModel.ts";
import { builtinDaimons, builtinSouls } from "../../../souls/index.ts";

interface Edge {
  source: string[];
  event: string;
  /** Absolute paths of the targets; none for an edge that stays. */
  targets: string[][];
}

/** An exported target reference back to an absolute path, as XState resolves it. */
function resolveTarget(source: string[], ref: string, rootId: string): string[] {
  if (ref.startsWith(`#${rootId}.`)) return ref.slice(rootId.length + 2).split(".");
  if (ref === `#${rootId}`) return [];
  if (ref.startsWith(".")) return [...source, ...ref.slice(1).split(".")];
  return [...source.slice(0, -1), ...ref.split(".")];
}

function edgesOf(json: MachineJson): Edge[] {
  const edges: Edge[] = [];
  const visit = (state: StateJson, path: string[]) => {
    for (const [event, t] of Object.entries(state.on ?? {})) {
      const refs = t.target === undefined ? [] : [t.target].flat();
      edges.push({ source: path, event, targets: refs.map((r) => resolveTarget(path, r, json.id)) });
    }
    for (const [key, child] of Object.entries(state.states ?? {})) visit(child, [...path, key]);
  };
  visit(json, []);
  return edges;
}

function statePaths(states: Record<string, { states?: unknown }> | undefined, prefix: string[] = []): string[] {
  return Object.entries(states ?? {}).flatMap(([key, child]) => {
    const path = [...prefix, key];
    return [path.join("."), ...statePaths(child.states as Record<string, { states?: unknown }> | undefined, path)];
  });
}

/** `["a", "b", "c"]` as the state value `{ a: { b: "c" } }`. */
function valueOf(path: string[]): StateValue {
  return path.length === 1 ? path[0]! : { [path[0]!]: valueOf(path.slice(1)) };
}

/** Sends every edge's event from its source state and checks where the machine ends up. */
function expectEveryEdgeTaken(machine: AnyStateMachine, edges: Edge[]): void {
  const [initial] = initialTransition(machine);
  for (const edge of edges) {
    const from = edge.source.length === 0 ? initial : machine.resolveState({ value: valueOf(edge.source), context: initial.context });
    const [next] = transition(machine, from, { type: edge.event });
    const where = `${edge.source.join(".") || "(root)"} --${edge.event}-->`;
    if (edge.targets.length === 0) expect(next.value, where).toEqual(from.value);
    for (const target of edge.targets) expect(next.matches(valueOf(target)), `${where} ${target.join(".")}`).toBe(true);
  }
}

/** Nothing XState would need an implementation for: no guard, no eventless edge, no invoke. */
function expectRunnableAsIs(json: MachineJson): void {
  const executable = ["guard", "always", "invoke", "onDone", "onError", "after", "context", "output"];
  const visit = (state: StateJson, path: string) => {
    expect(Object.keys(state).filter((k) => executable.includes(k)), path).toEqual([]);
    for (const [event, t] of Object.entries(state.on ?? {})) {
      expect(Object.keys(t).filter((k) => executable.includes(k)), `${path} ${event}`).toEqual([]);
    }
    for (const [key, child] of Object.entries(state.states ?? {})) visit(child, `${path}.${key}`);
  };
  visit(json, json.id);
}

const souls = Object.entries(builtinSouls);

describe.each(souls)("the machine JSON of the soul %s", (_id, blueprint) => {
  const json = soulMachineJson(blueprint);
  const processes = [...blueprint.processes.keys()];

  it("is plain JSON, the same every time", () => {
    expect(JSON.parse(JSON.stringify(json))).toStrictEqual(json);
    expect(JSON.stringify(soulMachineJson(blueprint))).toBe(JSON.stringify(json));
    expectRunnableAsIs(json);
  });

  it("has one top-level state per mental process, starting in the initial one", () => {
    expect(Object.keys(json.states ?? {})).toEqual(processes);
    expect(json.initial).toBe(blueprint.initialProcess);
    expect(json.on).toBeUndefined();
  });

  it("has an edge for every hand-over the blueprint allows, and none other", () => {
    const handOvers = edgesOf(json).filter((e) => e.source.length === 1 && e.event.startsWith("process."));
    const drawn = new Set(handOvers.map((e) => `${e.source[0]}->${e.targets.map((t) => t.join(".")).join(",")}`));
    for (const from of processes) {
      expect(Object.keys(json.states![from]!.on ?? {})).toEqual(blueprint.processes.get(from)!.next.map(processEvent));
      for (const to of processes) {
        if (from !== to) expect(drawn.has(`${from}->${to}`), `${from} -> ${to}`).toBe(blueprint.allows(from, to));
      }
    }
    expect(handOvers).toHaveLength(processes.reduce((n, p) => n + blueprint.processes.get(p)!.next.length, 0));
  });

  it("holds the ISM as the child of every ISM process, and nothing inside the others", () => {
    for (const declared of blueprint.processes.values()) {
      const state = json.states![declared.name]!;
      if (!isIsmProcess(declared.process)) {
        expect(state.states, declared.name).toBeUndefined();
        continue;
      }
      expect(state.initial).toBe(ISM_STATE);
      const ism = state.states![ISM_STATE]!;
      expect(ism.meta?.["ensoul"]).toMatchObject({ kind: "ism", goal: expect.any(String) });
      expect(ism.initial).toBe(ismMachine.root.config.initial);
      expect(Object.keys(ism.states ?? {})).toEqual(Object.keys(ismMachine.root.states));
    }
  });

  it("round-trips through createMachine: the processes are its states, it starts and moves along every edge", () => {
    const machine = createMachine(json);
    expect(Object.keys(machine.root.states)).toEqual(processes);
    const actor = createActor(machine).start();
    expect(actor.getSnapshot().matches(blueprint.initialProcess)).toBe(true);
    const first = blueprint.processes.get(blueprint.initialProcess)!.next[0];
    if (first !== undefined) {
      actor.send({ type: processEvent(first) });
      expect(actor.getSnapshot().matches(first)).toBe(true);
    }
    actor.stop();
    expectEveryEdgeTaken(machine, edgesOf(json));
  });
});

it("Claudius's problemSolving is an ISM process, drawn with the ISM's phases", () => {
  const json = soulMachineJson(builtinSouls["claudius"]!);
  const ism = json.states!["problemSolving"]!.states![ISM_STATE]!;
  expect(Object.keys(ism.states!)).toEqual(expect.arrayContaining(["checkPerceptions", "selecting", "acting", "done", "transition"]));
  expect(ism.on?.["ism.interrupt"]?.target).toBe(".interrupted");
  expect(ism.states!["selecting"]!.on?.["done.chooseAction [choseActions]"]).toMatchObject({ target: "acting", meta: { ensoul: { when: "done", actor: "chooseAction", guard: "choseActions" } } });
});

/** Every state path of a real machine, and its transitions counted. */
function realShape(machine: AnyStateMachine): { paths: string[]; transitions: number } {
  const paths: string[] = [];
  let transitions = 0;
  const visit = (node: AnyStateNode) => {
    if (node.path.length > 0) paths.push(node.path.join("."));
    transitions += [...node.transitions.values()].reduce((n, list) => n + list.length, 0) + (node.always?.length ?? 0);
    for (const child of Object.values(node.states) as AnyStateNode[]) visit(child);
  };
  visit(machine.root);
  return { paths, transitions };
}

describe.each([
  ["the daimon", daimonMachine, daimonMachineJson(), "daimon"],
  ["Kothar", daimonMachine, daimonMachineJson(builtinDaimons["kothar"]), "Kothar"],
  ["the bridge", bridgeMachine, bridgeMachineJson(), "bridge"],
] as const)("the machine JSON of %s", (_name, real, json, id) => {
  it("is plain JSON, the same every time, with nothing XState would have to implement", () => {
    expect(JSON.parse(JSON.stringify(json))).toStrictEqual(json);
    expect(json.id).toBe(id);
    expectRunnableAsIs(json);
  });

  it("has every state of the real machine and an edge for each of its transitions", () => {
    const shape = realShape(real);
    expect(statePaths(json.states)).toEqual(shape.paths);
    expect(json.initial).toBe(real.root.config.initial);
    expect(edgesOf(json)).toHaveLength(shape.transitions);
  });

  it("round-trips through createMachine, starts in the initial state and moves along every edge", () => {
    const machine = createMachine(json);
    expect(statePaths(machine.root.states as Record<string, { states?: unknown }>)).toEqual(statePaths(json.states));
    const actor = createActor(machine).start();
    expect(actor.getSnapshot().value).toBe(real.root.config.initial);
    actor.stop();
    expectEveryEdgeTaken(machine, edgesOf(json));
  });
});

it("the daimon's guarded, eventless and actor edges are events named after what takes them", () => {
  const json = daimonMachineJson();
  expect(json.states!["off"]!.on?.["always [modeOn]"]).toMatchObject({ target: "listening", meta: { ensoul: { when: "always", guard: "modeOn" } } });
  const listening = json.states!["listening"]!;
  expect(listening.states!["watching"]!.on?.["OBSERVE_SPEECH [divinationDue]"]).toMatchObject({ target: "divining", meta: { ensoul: { event: "OBSERVE_SPEECH" } } });
  expect(listening.states!["divining"]!.on?.["done.divine [hasIntuition]"]?.target).toBe("whispering");
  expect(listening.states!["divining"]!.on?.["error.divine"]?.target).toBe("watching");
  expect(listening.meta?.["ensoul"]).toEqual({ invokes: ["observe"] });
  expect(json.on?.["STOP"]).toEqual({ target: ".stopped" });
});

describe("targetRef", () => {
  it("names a sibling by key, a descendant from the source, anything else by the machine's id", () => {
    expect(targetRef(["a"], ["b"], "m")).toBe("b");
    expect(targetRef(["a", "x"], ["a", "y", "z"], "m")).toBe("y.z");
    expect(targetRef([], ["a"], "m")).toBe(".a");
    expect(targetRef(["a"], ["a", "b"], "m")).toBe(".b");
    expect(targetRef(["a", "x"], ["b"], "m")).toBe("#m.b");
    expect(targetRef(["a"], ["a"], "m")).toBe("a");
  });
});

describe("jsonSafe", () => {
  it("drops functions, symbols, undefined and cycles; non-finite numbers become null", () => {
    const cyclic: Record<string, unknown> = { keep: 1, fn: () => 1, sym: Symbol("s"), none: undefined, inf: Infinity, list: [1, () => 2] };
    cyclic["self"] = cyclic;
    expect(jsonSafe(cyclic)).toStrictEqual({ keep: 1, inf: null, list: [1, null] });
  });
});
