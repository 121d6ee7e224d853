/**
 * The node whose LMDB holds a soul, for the commands that read a soul from a data directory
 * (`ensoul memory`, `ensoul soul export`).
 *
 * One data directory may hold one soul id on several nodes: the demo's Claudius in `local`,
 * and another Claudius in `b` after README's two-node section. Those are two souls with one
 * name, and reading whichever node comes first once exported the wrong one. So a soul found
 * on more than one node is refused, each copy listed with its last turn and when it was
 * taken, and the command names how to choose (`--node`).
 *
 * Every store is opened as a reader: a running node may hold the directory, and this only looks.
 */
import { openStore, StoreError, userModels, type Store } from "../store/index.ts";
import { CliError } from "./CliError.ts";
import { dataEnvironments, type DataEnvironment } from "./dataEnvironments.ts";

export interface SoulCopy extends DataEnvironment {
  /** Its last committed turn; absent when the node keeps records of it but no state (user models alone). */
  turn?: number;
  /** When its newest memory was made (the end of its last turn), epoch ms. */
  lastAt?: number;
}

export interface SoulLookup {
  soul: string;
  data: string;
  /** Only `<data>/<node>`. */
  node?: string;
  /** The command, as the refusal tells how to choose: `ensoul soul export`. */
  command: string;
  /** A node with the soul's user models but no state holds it too (`ensoul memory --user`). */
  withUserModels?: boolean;
}

function openReader(dir: string): Store {
  try {
    return openStore({ path: dir, reader: true });
  } catch (err) {
    if (err instanceof StoreError) throw new CliError(`cannot read ${dir}: ${err.message}`, 1);
    throw err;
  }
}

/** The soul's copy in this store, or undefined when it has none. */
function copyIn(store: Store, env: DataEnvironment, o: SoulLookup): SoulCopy | undefined {
  const state = store.actor(o.soul).loadState();
  if (!state) return o.withUserModels && userModels(store, o.soul).users().length > 0 ? { ...env } : undefined;
  const memories = (state.workingMemory as { memories?: { timestamp?: unknown }[] } | null)?.memories ?? [];
  const times = memories.map((m) => m.timestamp).filter((t): t is number => typeof t === "number");
  return { ...env, turn: state.turn, ...(times.length > 0 ? { lastAt: Math.max(...times) } : {}) };
}

const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

function describeCopy(c: SoulCopy): string {
  const where = c.node === "(local)" ? `the directory itself` : `node ${c.node}`;
  if (c.turn === undefined) return `${where} (user models only, no turn)`;
  return `${where} (turn ${c.turn}${c.lastAt !== undefined ? `, last turn at ${isoSeconds(c.lastAt)}` : ""})`;
}

/** Where the soul is: its one copy under the data directory, or a CliError naming the copies to choose from. */
export async function locateSoul(o: SoulLookup): Promise<SoulCopy> {
  const copies: SoulCopy[] = [];
  const seen = new Set<string>();
  for (const env of dataEnvironments(o.data, o.node)) {
    const store = openReader(env.dir);
    try {
      for (const id of store.actorIds()) seen.add(id);
      const copy = copyIn(store, env, o);
      if (copy) copies.push(copy);
    } finally {
      await store.close();
    }
  }
  if (copies.length === 0) throw new CliError(`unknown soul '${o.soul}' in ${o.data} (souls there: ${[...seen].join(", ") || "none"})`);
  if (copies.length > 1) {
    // One line, as every CLI error: the copies, then how to choose.
    throw new CliError(`soul '${o.soul}' is on ${copies.length} nodes in ${o.data}, as different souls: ${copies.map(describeCopy).join(", ")}; say which: ${o.command} ${o.soul} --node <node>`);
  }
  return copies[0]!;
}

/** Runs `read` on the store of the soul's one copy (locateSoul), opened as a reader, and closes it. */
export async function readSoul<T>(o: SoulLookup, read: (store: Store, copy: SoulCopy) => T | Promise<T>): Promise<T> {
  const copy = await locateSoul(o);
  const store = openReader(copy.dir);
  try {
    return await read(store, copy);
  } finally {
    await store.close();
  }
}
