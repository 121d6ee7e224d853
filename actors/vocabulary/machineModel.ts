/**
 * A running XState machine as plain `createMachine` JSON, for Stately's tools and the debugger
 * page: states, their descriptions and edges, and nothing executable.
 *
 * The JSON is a model of the machine, not a copy of it. A guard, an eventless (`always`)
 * transition or an invoked actor's result cannot be carried in JSON: a guard named in the
 * JSON but not implemented throws when it is evaluated, so the machine would not even start.
 * Each of those edges therefore becomes an event of its own, named after what takes it:
 *
 *   OBSERVE_SPEECH [divinationDue]   the event, when the guard holds
 *   always [perceptionPending]       at once, when the guard holds
 *   done.chooseAction [choseDone]    the invoked actor's result, when the guard holds
 *   error.chooseAction               the invoked actor failed
 *
 * So every edge of the model can be taken by sending its event, in Stately's simulator as in
 * a test, and the real event, guard and actor are in the edge's `meta.ensoul`. Actions are kept
 * by name (an action XState does not know is skipped, not an error); invoked actors are listed
 * in the state's `meta.ensoul.invokes`, since an invoke XState cannot start leaves a hole in
 * the snapshot's children that breaks its persistence.
 */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from "xstate";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** One edge: `createMachine`'s transition config, JSON only. */
export interface TransitionJson {
  /** A sibling's key, `.child.path` below the source, or `#<machine id>.<path>`; none: the state stays. */
  target?: string | string[];
  actions?: string[];
  reenter?: true;
  description?: string;
  meta?: JsonObject;
}

/** One state: `createMachine`'s state config, JSON only. */
export interface StateJson {
  description?: string;
  type?: "final" | "parallel" | "history";
  history?: "shallow" | "deep";
  initial?: string;
  entry?: string[];
  exit?: string[];
  tags?: string[];
  on?: Record<string, TransitionJson>;
  states?: Record<string, StateJson>;
  meta?: JsonObject;
}

/** A whole machine: `createMachine(json)` accepts it as it is. */
export interface MachineJson extends StateJson {
  id: string;
}

/** Where a machine's states go in the exported JSON. */
export interface Placement {
  /** The exported machine's id, for `#id` targets. */
  rootId: string;
  /** The path, in the exported JSON, of the state this machine's root becomes ([] for the root). */
  prefix: readonly string[];
}

/** Keeps the JSON part of a value: functions, symbols, undefined and cycles are dropped. */
export function jsonSafe(value: unknown, seen: Set<object> = new Set()): JsonValue | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value !== "object" || seen.has(value)) return undefined;
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => jsonSafe(v, seen) ?? null);
    const out: JsonObject = {};
    for (const [key, v] of Object.entries(value)) {
      const safe = jsonSafe(v, seen);
      if (safe !== undefined) out[key] = safe;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** An action or guard's name: a string, `{ type }`, or a built-in action's function with its `type`. */
function nameOf(ref: unknown): string {
  if (typeof ref === "string") return ref;
  const type = (ref as { type?: unknown } | null)?.type;
  if (typeof type === "string") return type;
  return typeof ref === "function" && ref.name ? ref.name : "(inline)";
}

/**
 * The reference XState resolves from `source` to `target`: a sibling (or a sibling's
 * descendant) by key path, a descendant as `.path`, anything else by the machine's id.
 */
export function targetRef(source: readonly string[], target: readonly string[], rootId: string): string {
  const startsWith = (path: readonly string[], prefix: readonly string[]) => prefix.every((key, i) => path[i] === key);
  if (target.length > source.length && startsWith(target, source)) return `.${target.slice(source.length).join(".")}`;
  const parent = source.slice(0, -1);
  if (source.length > 0 && target.length > parent.length && startsWith(target, parent)) return target.slice(parent.length).join(".");
  return target.length === 0 ? `#${rootId}` : `#${rootId}.${target.join(".")}`;
}

/** The names of the actors a state invokes, by invoke id. */
function invokedActors(node: AnyStateNode): Map<string, string> {
  const configs = [node.config.invoke ?? []].flat() as { src?: unknown }[];
  return new Map(node.invoke.map((invoke, i) => [invoke.id, typeof configs[i]?.src === "string" ? configs[i].src : nameOf(invoke.src)]));
}

/** What takes an edge: its trigger as a readable word (see the file's comment). */
function triggerOf(eventType: string, actors: Map<string, string>): { key: string; when: string; actor?: string } {
  for (const [prefix, when] of [["xstate.done.actor.", "done"], ["xstate.error.actor.", "error"]] as const) {
    if (eventType.startsWith(prefix)) {
      const actor = actors.get(eventType.slice(prefix.length)) ?? "actor";
      return { key: `${when}.${actor}`, when, actor };
    }
  }
  if (eventType.startsWith("xstate.done.state.")) return { key: "done", when: "done" };
  if (eventType.startsWith("xstate.after.")) return { key: `after.${eventType.split(".")[2]}`, when: "after" };
  return { key: eventType, when: "event" };
}

function transitionJson(t: AnyTransitionDefinition, trigger: ReturnType<typeof triggerOf>, place: (n: AnyStateNode) => string[], placement: Placement): TransitionJson {
  const out: TransitionJson = {};
  const source = place(t.source);
  const targets = (t.target ?? []).map((n) => targetRef(source, place(n), placement.rootId));
  if (targets.length > 0) out.target = targets.length === 1 ? targets[0] : targets;
  const actions = t.actions.map(nameOf);
  if (actions.length > 0) out.actions = actions;
  if (t.reenter) out.reenter = true;
  if (typeof t.description === "string") out.description = t.description;
  const guard = t.guard === undefined ? undefined : nameOf(t.guard);
  // A plain event needs no explanation; a renamed trigger says what it stands for.
  if (guard !== undefined || trigger.when !== "event") {
    const ensoul: JsonObject = { when: trigger.when };
    if (trigger.when === "event") ensoul["event"] = trigger.key;
    if (trigger.actor !== undefined) ensoul["actor"] = trigger.actor;
    if (guard !== undefined) ensoul["guard"] = guard;
    out.meta = { ensoul };
  }
  return out;
}

/** Every edge leaving one state, keyed by the event that takes it in the model. */
function edgesOf(node: AnyStateNode, place: (n: AnyStateNode) => string[], placement: Placement): Record<string, TransitionJson> {
  const actors = invokedActors(node);
  type Trigger = ReturnType<typeof triggerOf>;
  const all: [Trigger, AnyTransitionDefinition][] = [
    ...[...node.transitions.entries()].flatMap(([type, list]) => list.map((t): [Trigger, AnyTransitionDefinition] => [triggerOf(type, actors), t])),
    ...(node.always ?? []).map((t): [Trigger, AnyTransitionDefinition] => [{ key: "always", when: "always" }, t]),
  ];
  const on: Record<string, TransitionJson> = {};
  for (const [trigger, t] of all) {
    const base = t.guard === undefined ? trigger.key : `${trigger.key} [${nameOf(t.guard)}]`;
    // Two edges with one trigger and one guard name (guards differing only in params) stay apart.
    let key = base;
    for (let n = 2; key in on; n++) key = `${base} (${n})`;
    on[key] = transitionJson(t, trigger, place, placement);
  }
  return on;
}

/** The state's own meta (JSON part) with ensoul's facts under `ensoul`. */
function metaOf(node: AnyStateNode, ensoul: JsonObject): JsonObject | undefined {
  const own = jsonSafe(node.meta);
  const meta: JsonObject = own !== null && typeof own === "object" && !Array.isArray(own) ? own : {};
  if (Object.keys(ensoul).length > 0) meta["ensoul"] = ensoul;
  return Object.keys(meta).length > 0 ? meta : undefined;
}

/** One state of `machine` and everything below it, placed as `placement` says. */
export function stateJson(node: AnyStateNode, placement: Placement): StateJson {
  const place = (n: AnyStateNode) => [...placement.prefix, ...n.path];
  const out: StateJson = {};
  if (node.description !== undefined) out.description = node.description;
  if (node.type === "final" || node.type === "parallel" || node.type === "history") out.type = node.type;
  if (node.type === "history" && node.history) out.history = node.history;
  if (node.type === "compound") out.initial = node.initial.target[0]?.key ?? String(node.config.initial);
  if (node.entry.length > 0) out.entry = node.entry.map(nameOf);
  if (node.exit.length > 0) out.exit = node.exit.map(nameOf);
  if (node.tags.length > 0) out.tags = [...node.tags];
  const on = edgesOf(node, place, placement);
  if (Object.keys(on).length > 0) out.on = on;
  const children = Object.values(node.states) as AnyStateNode[];
  if (children.length > 0) out.states = Object.fromEntries(children.map((child) => [child.key, stateJson(child, placement)]));
  const invokes = [...invokedActors(node).values()];
  const meta = metaOf(node, invokes.length > 0 ? { invokes } : {});
  if (meta) out.meta = meta;
  return out;
}

/** A whole machine as the root of an export. */
export function machineModelJson(machine: AnyStateMachine, id: string, description: string, ensoul: JsonObject): MachineJson {
  const root = stateJson(machine.root, { rootId: id, prefix: [] });
  const meta: JsonObject = { ...(root.meta ?? {}), ensoul: { ...ensoul, ...((root.meta?.["ensoul"] as JsonObject | undefined) ?? {}) } };
  return { id, description: root.description ?? description, ...root, meta };
}
