/**
 * The live status of `ensoul up`: the node, its souls with their current process and turns,
 * its daimons. On a terminal, one block redrawn in place twice a second; otherwise (a log
 * file, a pipe, a test) a line per change, so the output reads as a history.
 */
import type { Writable } from "node:stream";
import type { NodeRegistry, RegistryContext, RegistrySoul } from "../node/index.ts";

export interface StatusDisplayOptions {
  registry: NodeRegistry;
  out: Writable;
  /** Redraw in place (a terminal) or print a line per change. */
  tty: boolean;
  /** Where the node is: "nats://…" or "in-process". */
  where: string;
  /** Terminal rows available for the soul table (default 20). */
  rows?: number;
  /** The souls to show: those the node runs now (under automatic placement, not every soul that may come to it). */
  shows?: (soulId: string) => boolean;
}

export interface StatusDisplay {
  /** A line above the status (stopping, stopped, warnings). */
  note(line: string): void;
  stop(): void;
}

function uptime(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}h${String(m).padStart(2, "0")}m` : m > 0 ? `${m}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

/** The block a terminal shows. */
export function renderStatus(ctx: RegistryContext, where: string, rows = 20, now = Date.now(), shows: (soulId: string) => boolean = () => true): string[] {
  const souls = [...ctx.souls.values()].filter((s) => shows(s.id));
  const turns = souls.reduce((n, s) => n + s.turns, 0);
  const lines = [
    `ensoul · cluster ${ctx.cluster} · node ${ctx.node} · ${where} · ${ctx.state} · up ${uptime(now - ctx.startedAt)} · ${turns} turns · ${ctx.counters.perceptions} perceptions · ${ctx.counters.dead} dead`,
  ];
  const width = Math.max(4, ...souls.slice(0, rows).map((s) => s.id.length));
  const pwidth = Math.max(7, ...souls.slice(0, rows).map((s) => s.process.length));
  lines.push(`  ${"soul".padEnd(width)}  ${"process".padEnd(pwidth)}  ${"turns".padStart(6)}  ${"pending".padStart(7)}  status`);
  for (const s of souls.slice(0, rows)) {
    lines.push(`  ${s.id.padEnd(width)}  ${s.process.padEnd(pwidth)}  ${String(s.turns).padStart(6)}  ${String(s.pending).padStart(7)}  ${s.status}`);
  }
  if (souls.length > rows) lines.push(`  … and ${souls.length - rows} more souls`);
  const daimons = Object.values(ctx.daimons);
  if (daimons.length) lines.push(`  daimons: ${daimons.map((d) => `${d.name} (${d.soul}) ${d.mode}`).join(", ")}`);
  const gates = Object.values(ctx.skillGates).filter((g) => g.serving);
  if (gates.length) lines.push(`  skill gates served: ${gates.map((g) => g.skill).join(", ")}`);
  for (const b of Object.values(ctx.bridges)) lines.push(`  bridge ${b.name} (${b.type} → ${b.soul}): ${b.state}, ${b.counters["perceptions"] ?? 0} in, ${b.counters["posted"] ?? 0} posted`);
  return lines;
}

export function startStatusDisplay(o: StatusDisplayOptions): StatusDisplay {
  const write = (s: string) => o.out.write(s);
  if (o.tty) {
    let drawn = 0;
    const draw = () => {
      const lines = renderStatus(o.registry.getSnapshot().context, o.where, o.rows ?? 20, Date.now(), o.shows);
      write(`${drawn > 0 ? `\x1b[${drawn}A\x1b[0J` : ""}${lines.join("\n")}\n`);
      drawn = lines.length;
    };
    draw();
    const timer = setInterval(draw, 500);
    return {
      note(line) {
        if (drawn > 0) write(`\x1b[${drawn}A\x1b[0J`);
        drawn = 0;
        write(`${line}\n`);
        draw();
      },
      stop() {
        clearInterval(timer);
        draw();
      },
    };
  }

  // A line per change: a soul's process, turns or whether it is in memory; the node's state;
  // a daimon's mode. Running/idle flips every turn and would only be noise.
  const seen = new Map<string, string>();
  let version: number | undefined;
  // Only the souls the latest patch changed, when it is the one patch since the last look: a
  // node of 100,000 souls patches ten times a second.
  const changedSouls = (ctx: RegistryContext): Iterable<RegistrySoul> => {
    const since = version;
    version = ctx.soulsVersion;
    if (since === ctx.soulsVersion) return [];
    if (since === ctx.soulsVersion - 1) return ctx.soulsChanged.flatMap((id) => ctx.souls.get(id) ?? []);
    return ctx.souls.values();
  };
  const emit = (ctx: RegistryContext) => {
    const keyed: [string, string, string][] = [[`node`, ctx.state, `[${ctx.node}] node ${ctx.state}`]];
    for (const s of changedSouls(ctx)) {
      if (o.shows && !o.shows(s.id)) continue;
      const status = s.status === "running" ? "active" : s.status;
      keyed.push([`soul:${s.id}`, `${s.process}|${s.turns}|${status}`, `[${ctx.node}] ${s.id}: process ${s.process}, ${s.turns} turns, ${status}`]);
    }
    for (const b of Object.values(ctx.bridges)) keyed.push([`bridge:${b.name}`, b.state, `[${ctx.node}] bridge ${b.name} (${b.type} → ${b.soul}): ${b.state}`]);
    for (const d of Object.values(ctx.daimons)) keyed.push([`daimon:${d.soul}/${d.name}`, d.mode, `[${ctx.node}] daimon ${d.name} of ${d.soul}: ${d.mode}`]);
    for (const [key, value, line] of keyed) {
      if (seen.get(key) === value) continue;
      seen.set(key, value);
      write(`${line}\n`);
    }
  };
  emit(o.registry.getSnapshot().context);
  const sub = o.registry.subscribe((snapshot) => emit(snapshot.context));
  return {
    note: (line) => write(`${line}\n`),
    stop() {
      sub.unsubscribe();
      emit(o.registry.getSnapshot().context);
    },
  };
}
