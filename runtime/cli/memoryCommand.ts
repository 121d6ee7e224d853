import { resolve } from "node:path";
import type { Writable } from "node:stream";
import { failedPerceptionsOf, findSoul, MAX_FAILED_LISTED, requestControl } from "../node/index.ts";
import { redactSecrets } from "../log/index.ts";
import type { SoulMemoryReply } from "../node/index.ts";
import type { NatsConnectOptions } from "../node/index.ts";
import { userModels, type UserModelVersion } from "../store/index.ts";
import { CliError } from "./CliError.ts";
import { print, withBus } from "./clusterTarget.ts";
import { readSoul } from "./soulLocation.ts";

export interface MemoryCommandOptions {
  soul: string;
  nats?: NatsConnectOptions;
  cluster: string;
  data: string;
  /** From LMDB: only `<data>/<node>` (needed when several nodes there hold the soul). */
  node?: string;
  json?: boolean;
  out?: Writable;
}

/** `ensoul memory <soul>`: over the bus when --nats is given (the live soul), else from LMDB in --data. */
export async function memoryCommand(o: MemoryCommandOptions): Promise<SoulMemoryReply> {
  const reply = o.nats
    ? await withBus({ nats: o.nats, cluster: o.cluster }, "memory", async (bus) => {
        const where = await findSoul(bus, o.soul);
        return requestControl<SoulMemoryReply>(bus, where.status.node, "memory", { soulId: o.soul });
      })
    : await memoryFromDisk(o);
  if (o.json) print(o, JSON.stringify(reply, null, 2));
  else for (const line of describeMemory(reply)) print(o, line);
  return reply;
}

export interface UserModelsCommandOptions {
  soul: string;
  data: string;
  /** Only `<data>/<node>` (needed when several nodes there hold the soul). */
  node?: string;
  /** Show this user's model history. */
  user?: string;
  /** Write every user's model (latest + history) as markdown files into this directory. */
  exportDir?: string;
  /** Given, the soul is looked up on the cluster so the output can say where it lives. */
  nats?: NatsConnectOptions;
  cluster: string;
  json?: boolean;
  out?: Writable;
}

export interface UserModelsReport {
  soulId: string;
  node: string;
  user?: string;
  history?: UserModelVersion[];
  exported?: string[];
}

/**
 * `ensoul memory <soul> --user <id>` / `--export <dir>`: the soul's versioned user models,
 * read from LMDB in --data (the directory itself, or `<data>/<node>` as `ensoul up` and
 * `ensoul demo` lay it out). LMDB lets this process read while a node writes, so it works on
 * a live soul too; with --nats the live node is named, and --data must be that node's.
 */
export async function userModelsCommand(o: UserModelsCommandOptions): Promise<UserModelsReport> {
  if (o.nats) {
    const live = await withBus({ nats: o.nats, cluster: o.cluster }, "memory", (bus) => findSoul(bus, o.soul)).catch((err: unknown) => {
      if (err instanceof CliError && /cannot reach NATS/.test(err.message)) throw err;
      return undefined;
    });
    print(o, live
      ? `soul ${o.soul} is live on node ${live.status.node}; reading its user models from LMDB in ${resolve(o.data)}`
      : `soul ${o.soul} is not live on the cluster; reading its user models from LMDB in ${resolve(o.data)}`);
  }
  const lookup = { soul: o.soul, data: o.data, command: "ensoul memory", withUserModels: true, ...(o.node !== undefined ? { node: o.node } : {}) };
  return readSoul(lookup, async (store, { node }) => {
    const models = userModels(store, o.soul);
    const report: UserModelsReport = { soulId: o.soul, node };
    if (o.user !== undefined) {
      report.user = o.user;
      report.history = models.forUser(o.user).history();
    }
    if (o.exportDir !== undefined) report.exported = await models.exportMarkdown(o.exportDir);
    if (o.json) print(o, JSON.stringify(report, null, 2));
    else for (const line of describeUserModels(report, models.users())) print(o, line);
    return report;
  });
}

function describeUserModels(r: UserModelsReport, users: string[]): string[] {
  const lines: string[] = [];
  if (r.user !== undefined) {
    const history = r.history ?? [];
    if (history.length === 0) {
      lines.push(`soul ${r.soulId} on node ${r.node} has no model of user '${r.user}' (users with a model: ${users.join(", ") || "none"})`);
    } else {
      lines.push(`user model of '${r.user}' kept by ${r.soulId} on node ${r.node}: ${history.length} version(s)`);
      for (const v of history) lines.push(`  v${v.version} · ${new Date(v.ts).toISOString()} · ${v.changeNote || "(no change note)"}`);
      const latest = history.at(-1)!;
      lines.push(`latest (v${latest.version}):`, "", latest.markdown, "");
    }
  }
  if (r.exported !== undefined) {
    lines.push(`exported ${r.exported.length} file(s) for ${users.length} user(s) of ${r.soulId}${r.exported.length ? ":" : ""}`);
    for (const path of r.exported) lines.push(`  ${path}`);
  }
  return lines;
}

function memoryFromDisk(o: MemoryCommandOptions): Promise<SoulMemoryReply> {
  const lookup = { soul: o.soul, data: o.data, command: "ensoul memory", ...(o.node !== undefined ? { node: o.node } : {}) };
  return readSoul(lookup, (store, { node }): SoulMemoryReply => {
    const actor = store.actor(o.soul);
    const state = actor.loadState();
    if (!state) throw new CliError(`soul '${o.soul}' in ${store.path} has no committed state any more`);
    return {
      soulId: o.soul,
      node,
      process: state.currentProcess,
      turns: state.turn,
      workingMemory: state.workingMemory,
      soulMemory: state.soulMemory ?? {},
      inbox: { pending: actor.pendingInbox().length, failed: actor.failedInbox().length },
      failedPerceptions: failedPerceptionsOf(actor, MAX_FAILED_LISTED),
      live: false,
    };
  });
}

function describeMemory(m: SoulMemoryReply): string[] {
  const lines = [
    `soul ${m.soulId} on node ${m.node}${m.live ? " (live)" : ""} · process ${m.process} · ${m.turns} turns · inbox ${m.inbox.pending} pending, ${m.inbox.failed} failed${m.truncated ? " · oldest memories left out" : ""}`,
  ];
  const soulMemory = Object.entries(m.soulMemory);
  lines.push(`soul memory (${soulMemory.length}):`);
  for (const [k, v] of soulMemory) lines.push(`  ${k}: ${JSON.stringify(v)}`);
  const memories = ((m.workingMemory as { memories?: { role: string; name?: string; region?: string; content: string }[] } | null)?.memories ?? []);
  lines.push(`working memory (${memories.length} memories):`);
  for (const mem of memories) {
    const who = [mem.role, mem.name, mem.region].filter(Boolean).join(" ");
    lines.push(`  [${who}] ${oneLine(mem.content, 160)}`);
  }
  return [...lines, ...describeFailed(m)];
}

/** Each failed perception: when, who said what, its attempts, then why its turn failed. */
function describeFailed(m: SoulMemoryReply): string[] {
  const failed = m.failedPerceptions ?? [];
  if (failed.length === 0) return [];
  const shown = failed.length < m.inbox.failed ? ` (the newest ${failed.length})` : "";
  const lines = [`failed perceptions (${m.inbox.failed})${shown}:`];
  for (const f of failed) {
    const p = (f.perception ?? {}) as { name?: unknown; action?: unknown; content?: unknown };
    const said = `${typeof p.name === "string" ? `${p.name} ` : ""}${typeof p.action === "string" ? p.action : "said"}: "${oneLine(String(p.content ?? ""), 80)}"`;
    lines.push(`  ${new Date(f.receivedAt).toISOString()} · ${f.id} · ${said} · ${f.attempts} attempt${f.attempts === 1 ? "" : "s"}`);
    lines.push(`    ${redactSecrets(oneLine(f.error ?? "no reason recorded", 2_000))}`);
  }
  return lines;
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
