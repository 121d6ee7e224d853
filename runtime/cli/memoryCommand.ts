import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Writable } from "node:stream";
import { findSoul, requestControl } from "../node/clusterClient.ts";
import type { SoulMemoryReply } from "../node/controlProtocol.ts";
import type { NatsConnectOptions } from "../node/natsConnection.ts";
import { openStore } from "../store/index.ts";
import { CliError } from "./CliError.ts";
import { print, withBus } from "./clusterTarget.ts";

export interface MemoryCommandOptions {
  soul: string;
  nats?: NatsConnectOptions;
  cluster: string;
  data: string;
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
    : await memoryFromDisk(o.soul, o.data);
  if (o.json) print(o, JSON.stringify(reply, null, 2));
  else for (const line of describeMemory(reply)) print(o, line);
  return reply;
}

/** The LMDB environments under a data directory: the directory itself, or one per node below it. */
function environments(data: string): { dir: string; node: string }[] {
  const root = resolve(data);
  if (!existsSync(root)) throw new CliError(`no data directory at ${data}`);
  if (existsSync(join(root, "data.mdb"))) return [{ dir: root, node: "(local)" }];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(root, e.name, "data.mdb")))
    .map((e) => ({ dir: join(root, e.name), node: e.name }));
}

async function memoryFromDisk(soulId: string, data: string): Promise<SoulMemoryReply> {
  const envs = environments(data);
  if (envs.length === 0) throw new CliError(`no LMDB data in ${data} (nor in a node directory below it)`);
  const seen: string[] = [];
  for (const { dir, node } of envs) {
    const store = openStore({ path: dir });
    try {
      const ids = store.actorIds();
      seen.push(...ids);
      if (!ids.includes(soulId)) continue;
      const actor = store.actor(soulId);
      const state = actor.loadState();
      if (!state) continue;
      return {
        soulId,
        node,
        process: state.currentProcess,
        turns: state.turn,
        workingMemory: state.workingMemory,
        soulMemory: state.soulMemory ?? {},
        inbox: { pending: actor.pendingInbox().length, failed: actor.failedInbox().length },
        live: false,
      };
    } finally {
      await store.close();
    }
  }
  throw new CliError(`unknown soul '${soulId}' in ${data} (souls there: ${[...new Set(seen)].join(", ") || "none"})`);
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
    const text = mem.content.replace(/\s+/g, " ");
    lines.push(`  [${who}] ${text.length > 160 ? `${text.slice(0, 159)}…` : text}`);
  }
  return lines;
}
