/**
 * The debugger's view of the fleet: every soul of the cluster, on every node, as the nodes'
 * heartbeats (`ensoul.<cluster>.node.*.heartbeat`, docs/PROTOCOL.md 12.2) report them. It
 * holds only the latest entry per soul, so a request for the fleet costs no bus traffic, and
 * it reports each entry that changed, for the live `fleet` events.
 *
 * A node that goes silent for three of its heartbeat periods is `down` (its souls too); a
 * node whose last heartbeat says `stopped` is dropped and its souls are shown `stopped`. The
 * period is not configured here: it is measured from the beats themselves, so one debugger
 * watches clusters with any `runtime.heartbeatMs`.
 */
import { isValidName, SUBJECT_ROOT, type Bus, type Subscription } from "../../bus/index.ts";
import { componentLogger } from "../../log/index.ts";
import { decodeControl, isControlError, requestControl, type NodeStatus, type SoulRunStatus, type SoulStatusEntry, type TokenCount } from "../../node/index.ts";

export type FleetStatus = SoulRunStatus | "down";

/** One soul as `GET /api/souls` lists it (docs/DEBUGGER.md). */
export interface FleetSoul {
  id: string;
  name: string;
  node: string;
  process: string;
  status: FleetStatus;
  pending: number;
  turns: number;
  lastTurnAt?: number;
  turnsPerMinute: number;
  tokens: TokenCount;
}

export interface FleetNode {
  node: string;
  state: NodeStatus["state"] | "down";
  /** Epoch ms of its latest heartbeat (or status reply). */
  lastSeen: number;
  bus: string;
}

export interface FleetSnapshot {
  cluster: string;
  nodes: FleetNode[];
  souls: FleetSoul[];
}

export interface FleetView {
  snapshot(): FleetSnapshot;
  /** A soul some heartbeat named, or undefined. */
  soul(id: string): FleetSoul | undefined;
  stop(): void;
}

export interface FleetOptions {
  /** Called with each soul whose entry changed. Keep it cheap: it runs per heartbeat. */
  onChange(soul: FleetSoul): void;
  /** Nodes to ask for their status at once, so the fleet is there before the first heartbeat. */
  ask?: readonly string[];
}

/** Until two beats have been heard, the cluster config's default period is assumed. */
const DEFAULT_PERIOD_MS = 1_000;
/** The shortest heartbeat period a config may set: closer beats are the extra ones a node sends on a state change. */
const MIN_PERIOD_MS = 50;
const SILENT_PERIODS = 3;
const KEPT_INTERVALS = 5;
const SWEEP_MS = 250;
const ASK_TIMEOUT_MS = 1_500;

interface NodeTrack {
  status: NodeStatus;
  lastSeen: number;
  intervals: number[];
  down: boolean;
}

const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/** A heartbeat's soul entry as the fleet shows it; fields an older node does not send read as zero. */
export function fleetEntry(s: SoulStatusEntry, node: string): FleetSoul {
  const tokens = s.tokens as Partial<TokenCount> | undefined;
  return {
    id: s.id,
    name: typeof s.name === "string" ? s.name : s.id,
    node,
    process: typeof s.process === "string" ? s.process : "",
    status: s.status,
    pending: num(s.pending),
    turns: num(s.turns),
    ...(typeof s.lastTurnAt === "number" ? { lastTurnAt: s.lastTurnAt } : {}),
    turnsPerMinute: num(s.turnsPerMinute),
    tokens: { input: num(tokens?.input), output: num(tokens?.output) },
  };
}

/** The median of the recent intervals: one long gap (a pause) or one short one (a state change) does not move it. */
function periodOf(track: NodeTrack): number {
  if (track.intervals.length === 0) return DEFAULT_PERIOD_MS;
  const sorted = [...track.intervals].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const isLive = (s: FleetSoul) => s.status === "active" || s.status === "running";

/** The fleet's state and the rules that change it; `watchFleet` wires it to the bus. */
class Fleet {
  readonly nodes = new Map<string, NodeTrack>();
  readonly souls = new Map<string, { entry: FleetSoul; json: string }>();
  readonly #asked = new Set<string>();

  constructor(
    private readonly bus: Bus,
    private readonly onChange: (soul: FleetSoul) => void,
  ) {}

  place(entry: FleetSoul): void {
    const current = this.souls.get(entry.id);
    // While a soul moves, two nodes may list it: the one running it wins over the one that let it go.
    if (current && current.entry.node !== entry.node && isLive(current.entry) && !this.nodes.get(current.entry.node)?.down && !isLive(entry)) return;
    const json = JSON.stringify(entry);
    if (current?.json === json) return;
    this.souls.set(entry.id, { entry, json });
    this.onChange(entry);
  }

  markSouls(node: string, status: FleetStatus, unless?: ReadonlySet<string>): void {
    for (const { entry } of [...this.souls.values()]) if (entry.node === node && entry.status !== status && !unless?.has(entry.id)) this.place({ ...entry, status });
  }

  /** Takes a node's status in; resolves once the nodes it names elsewhere, not heard yet, have been asked. */
  heard(status: NodeStatus, periodic: boolean): Promise<unknown> {
    if (!isValidName(status.node)) return Promise.resolve();
    if (status.state === "stopped") {
      this.nodes.delete(status.node);
      this.markSouls(status.node, "stopped");
      return Promise.resolve();
    }
    this.#track(status, periodic);
    const listed = new Set<string>();
    for (const s of status.souls) {
      if (typeof s !== "object" || s === null || !isValidName(s.id)) continue;
      listed.add(s.id);
      this.place(fleetEntry(s, status.node));
    }
    // A soul its node no longer lists has left it (moved, or gone from the config); a partial
    // status (a node of more souls than one message holds) leaves the others out on purpose.
    if (!status.soulsPartial) this.markSouls(status.node, "stopped", listed);
    const elsewhere = Object.entries(status.elsewhere ?? {}).filter(([other]) => !this.nodes.has(other));
    return Promise.all(elsewhere.map(([other, ids]) => this.askOnce(other, Array.isArray(ids) ? ids : [])));
  }

  /**
   * Records the beat. A restarted node (a new start time) begins a new history. A gap after
   * which the node was down is kept: the median soon drowns one long gap, while a period
   * longer than the assumed one must be learnt from exactly such a gap.
   */
  #track(status: NodeStatus, periodic: boolean): void {
    const now = Date.now();
    const previous = this.nodes.get(status.node);
    const same = previous !== undefined && previous.status.startedAt === status.startedAt;
    const intervals = same ? previous.intervals : [];
    const interval = same ? now - previous.lastSeen : 0;
    if (periodic && same && interval >= MIN_PERIOD_MS) {
      intervals.push(interval);
      if (intervals.length > KEPT_INTERVALS) intervals.shift();
    }
    this.nodes.set(status.node, { status, lastSeen: now, intervals, down: false });
  }

  /** Asks a node the fleet has not heard for its status; if it does not answer, the souls placed on it are shown down. */
  async askOnce(node: string, placed: readonly string[]): Promise<void> {
    if (this.#asked.has(node) || !isValidName(node)) return;
    this.#asked.add(node);
    let status: NodeStatus;
    try {
      status = await requestControl<NodeStatus>(this.bus, node, "status", {}, ASK_TIMEOUT_MS);
    } catch {
      for (const id of placed) {
        if (isValidName(id) && !this.souls.has(id)) this.place({ id, name: id, node, process: "", status: "down", pending: 0, turns: 0, turnsPerMinute: 0, tokens: { input: 0, output: 0 } });
      }
      return;
    }
    if (typeof status.node === "string" && Array.isArray(status.souls)) await this.heard(status, false);
  }

  /** Nodes silent for three of their periods are down, and so are their souls. */
  sweep(): void {
    const now = Date.now();
    for (const [node, track] of this.nodes) {
      if (track.down || now - track.lastSeen <= SILENT_PERIODS * periodOf(track)) continue;
      track.down = true;
      this.markSouls(node, "down");
    }
  }

  snapshot(cluster: string): FleetSnapshot {
    const nodes = [...this.nodes.entries()].map(([node, t]) => ({ node, state: t.down ? ("down" as const) : t.status.state, lastSeen: t.lastSeen, bus: t.status.bus }));
    return {
      cluster,
      nodes: nodes.sort((a, b) => a.node.localeCompare(b.node)),
      souls: [...this.souls.values()].map((s) => s.entry).sort((a, b) => a.id.localeCompare(b.id)),
    };
  }
}

export async function watchFleet(bus: Bus, cluster: string, options: FleetOptions): Promise<FleetView> {
  const fleet = new Fleet(bus, options.onChange);
  const sub: Subscription = bus.subscribe(`${SUBJECT_ROOT}.${cluster}.node.*.heartbeat`, (msg) => {
    const status = decodeControl<NodeStatus>(msg.data);
    if (isControlError(status) || typeof status.node !== "string" || !Array.isArray(status.souls)) return;
    fleet.heard(status, true).catch((err: unknown) => componentLogger("debugger").warn(`the fleet could not take node ${status.node}'s heartbeat in: ${(err as Error)?.message ?? err}`));
  });
  const sweep = setInterval(() => fleet.sweep(), SWEEP_MS);
  sweep.unref();
  await Promise.all((options.ask ?? []).map((node) => fleet.askOnce(node, [])));
  return {
    snapshot: () => fleet.snapshot(cluster),
    soul: (id) => fleet.souls.get(id)?.entry,
    stop() {
      clearInterval(sweep);
      sub.unsubscribe();
    },
  };
}
