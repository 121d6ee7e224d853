/**
 * The state chart's model, read from a soul's machine definition (an XState createMachine
 * config: `{ id, initial, states: { <process>: { on, states?, meta? } } }`) and the counted
 * transitions (`{ "from->to": n }`), then laid out. Pure: no DOM, so it can be tested alone.
 *
 * A target is a sibling key (`"talking"`) or an id path (`"#soul.talking.running"`); both
 * resolve to the top-level process they land in. The processes stand on an ellipse in the
 * order the machine declares them (the initial one first, at the top), so the same machine
 * always draws the same way.
 */

export interface ChartProcess {
  name: string;
  description?: string;
  /** An ISM child's states, drawn inside the process. */
  children: string[];
  childInitial?: string;
}

export interface ChartEdge {
  from: string;
  to: string;
  events: string[];
  count: number;
  /** False for a transition that was counted but is not in the machine definition. */
  declared: boolean;
}

export interface ChartModel {
  id: string;
  initial?: string;
  processes: ChartProcess[];
  edges: ChartEdge[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every target string of a transition value: `"x"`, `{ target }`, `[...]`, `{ target: [...] }`. */
function targetsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(targetsOf);
  if (isObject(value)) return targetsOf(value["target"]);
  return [];
}

/** The events of a state node: `on`, and the eventless `always` (named `(always)`). */
function transitionsOf(node: Json): [string, string[]][] {
  const on = isObject(node["on"]) ? Object.entries(node["on"]).map(([event, v]): [string, string[]] => [event, targetsOf(v)]) : [];
  return node["always"] ? [...on, ["(always)", targetsOf(node["always"])]] : on;
}

/** The process an id path lands in (`#soul.talking.running` -> `talking`), if any. */
function resolveIdTarget(target: string, machineId: string, processes: Set<string>): string | undefined {
  const own = `#${machineId}.`;
  // The machine's own id may hold dots: strip it whole before reading the path.
  const path = target.startsWith(own) ? target.slice(own.length) : target.slice(1);
  const first = path.split(".")[0];
  return processes.has(first) ? first : undefined;
}

function collectEdges(machineId: string, states: Json): Map<string, ChartEdge> {
  const names = new Set(Object.keys(states));
  const edges = new Map<string, ChartEdge>();
  const add = (from: string, to: string, event: string) => {
    const key = `${from}->${to}`;
    const edge = edges.get(key) ?? { from, to, events: [], count: 0, declared: true };
    if (!edge.events.includes(event)) edge.events.push(event);
    edges.set(key, edge);
  };
  const walk = (process: string, node: Json, topLevel: boolean) => {
    for (const [event, targets] of transitionsOf(node)) {
      for (const target of targets) {
        const to = target.startsWith("#") ? resolveIdTarget(target, machineId, names) : topLevel && names.has(target) ? target : undefined;
        // Inside a process (its ISM), a move to another of its own states is no edge of the chart.
        if (to !== undefined && (topLevel || to !== process)) add(process, to, event);
      }
    }
    if (isObject(node["states"])) for (const child of Object.values(node["states"])) if (isObject(child)) walk(process, child, false);
  };
  for (const [name, node] of Object.entries(states)) if (isObject(node)) walk(name, node, true);
  return edges;
}

/**
 * The states drawn inside a process: its child states, or, when its only child is a wrapper
 * holding a machine (an ISM process's `ism` state, as machineJson.ts writes it), that
 * machine's states.
 */
function innerStates(state: Json): { children: string[]; initial?: string } {
  let node = state;
  for (;;) {
    const states = isObject(node["states"]) ? node["states"] : {};
    const keys = Object.keys(states);
    const only = keys.length === 1 ? states[keys[0]] : undefined;
    if (isObject(only) && isObject(only["states"]) && Object.keys(only["states"]).length > 0) {
      node = only;
      continue;
    }
    return { children: keys, ...(typeof node["initial"] === "string" ? { initial: node["initial"] } : {}) };
  }
}

function processOf(name: string, node: unknown): ChartProcess {
  const state = isObject(node) ? node : {};
  const meta = isObject(state["meta"]) ? state["meta"] : {};
  const description = typeof state["description"] === "string" ? state["description"] : typeof meta["description"] === "string" ? meta["description"] : undefined;
  const inner = innerStates(state);
  return {
    name,
    children: inner.children,
    ...(description !== undefined ? { description } : {}),
    ...(inner.initial !== undefined ? { childInitial: inner.initial } : {}),
  };
}

export function chartModel(machine: unknown, transitions: Record<string, number>): ChartModel {
  const config = isObject(machine) ? machine : {};
  const id = typeof config["id"] === "string" ? config["id"] : "machine";
  const states = isObject(config["states"]) ? config["states"] : {};
  const initial = typeof config["initial"] === "string" ? config["initial"] : undefined;
  const names = Object.keys(states);
  // The initial process first, then the others in the order the machine declares them.
  const ordered = initial && names.includes(initial) ? [initial, ...names.filter((n) => n !== initial)] : names;
  const processes = ordered.map((name) => processOf(name, states[name]));
  const edges = collectEdges(id, states);
  for (const [key, n] of Object.entries(transitions ?? {})) {
    const [from, to] = key.split("->");
    if (!from || !to) continue;
    for (const name of [from, to]) if (!processes.some((p) => p.name === name)) processes.push({ name, children: [] });
    const edge = edges.get(key) ?? { from, to, events: [], count: 0, declared: false };
    edge.count += Number(n) || 0;
    edges.set(key, edge);
  }
  return { id, ...(initial !== undefined ? { initial } : {}), processes, edges: [...edges.values()] };
}

// ---- layout ----

export interface Box { process: ChartProcess; x: number; y: number; w: number; h: number; childW: number }

export const BOX = { w: 156, h: 42, childH: 22, gap: 6, childChar: 6.7 };

/** A process box's size: an ISM's states two to a row, each as wide as the longest name needs. */
function boxSize(p: ChartProcess): { w: number; h: number; childW: number } {
  if (p.children.length === 0) return { w: BOX.w, h: BOX.h, childW: 0 };
  const longest = Math.max(...p.children.map((c) => c.length));
  const childW = Math.min(130, Math.max((BOX.w - 3 * BOX.gap) / 2, longest * BOX.childChar + 10));
  const rows = Math.ceil(p.children.length / 2);
  return { w: 2 * childW + 3 * BOX.gap, h: BOX.h - 6 + rows * (BOX.childH + BOX.gap) + BOX.gap, childW };
}

/** Box centres on an ellipse, clockwise from the top; wide enough that neighbours never touch. */
export function layout(model: ChartModel): Box[] {
  const n = model.processes.length;
  if (n === 0) return [];
  const ry = n <= 2 ? 0 : Math.max(150, (n * 200) / (2 * Math.PI));
  const rx = n <= 2 ? 150 * (n - 1) : ry * 1.45;
  return model.processes.map((process, i) => {
    const angle = n <= 2 ? Math.PI * (i === 0 ? 1 : 0) : -Math.PI / 2 + (2 * Math.PI * i) / n;
    return { process, ...boxSize(process), x: rx * Math.cos(angle), y: ry * Math.sin(angle) };
  });
}

export interface Point { x: number; y: number }

/** Where the line from a box's centre towards `toward` leaves the box (plus `gap`). */
export function borderPoint(box: Box, toward: Point, gap = 0): Point {
  const dx = toward.x - box.x;
  const dy = toward.y - box.y;
  if (dx === 0 && dy === 0) return { x: box.x, y: box.y };
  const t = Math.min(dx === 0 ? Infinity : (box.w / 2 + gap) / Math.abs(dx), dy === 0 ? Infinity : (box.h / 2 + gap) / Math.abs(dy));
  return { x: box.x + dx * t, y: box.y + dy * t };
}

export interface Curve { start: Point; control: Point; end: Point }

/** A curved edge between two boxes: a quadratic curve from border to border. */
export function edgeGeometry(from: Box, to: Box): Curve {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const len = Math.hypot(dx, dy) || 1;
  // Bend to the left of the direction of travel: a->b and b->a never lie on each other.
  const bend = 0.18 * len;
  const control = { x: (from.x + to.x) / 2 + (dy / len) * bend, y: (from.y + to.y) / 2 - (dx / len) * bend };
  const start = borderPoint(from, control, 2);
  const end = borderPoint(to, control, 4);
  return { start, control, end };
}

export function pointAt(c: Curve, t: number): Point {
  const a = (1 - t) * (1 - t);
  const b = 2 * (1 - t) * t;
  const d = t * t;
  return { x: a * c.start.x + b * c.control.x + d * c.end.x, y: a * c.start.y + b * c.control.y + d * c.end.y };
}

/** Where an edge's count goes: the middle of the curve, else the nearest spot clear of other counts and boxes. */
export function labelSpot(curve: Curve, placed: Point[], boxes: Box[]): Point {
  const clear = (p: Point) =>
    placed.every((q) => Math.abs(q.x - p.x) > 24 || Math.abs(q.y - p.y) > 18) &&
    boxes.every((b) => Math.abs(b.x - p.x) > b.w / 2 + 8 || Math.abs(b.y - p.y) > b.h / 2 + 8);
  for (const t of [0.5, 0.4, 0.6, 0.32, 0.68, 0.25, 0.75]) {
    const p = pointAt(curve, t);
    if (clear(p)) return p;
  }
  return pointAt(curve, 0.5);
}
