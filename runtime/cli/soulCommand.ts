/**
 * `ensoul soul export` and `ensoul soul import`: a soul out of one data directory as a soul
 * file (docs/SOUL-FILE.md), and into another. The store does the moving
 * (runtime/store/soulFile.ts); this finds where the soul is or goes, and what its blueprint
 * is called.
 *
 * Export opens LMDB as a reader, so it works beside a running node and sees its last
 * committed turn. Import writes, so it takes the data directory's lock: while a node runs
 * there it is refused (that node would go on from the state it holds and overwrite the
 * import with its next turn).
 */
import { readFile, rename, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Writable } from "node:stream";
import { blueprintOf, ConfigError, DEFAULT_DATA_DIR, loadClusterConfig, LOCAL_NODE, nodeDataDir, nodeOf, type ClusterConfig, type SoulConfig } from "../node/index.ts";
import { exportSoul, importSoul, openStore, parseSoulFile, serializeSoulFile, SOUL_STORE_NAMESPACE, StoreError, type SoulFile, type Store } from "../store/index.ts";
import { builtinSouls } from "../../souls/index.ts";
import { CliError } from "./CliError.ts";
import { readSoul } from "./soulLocation.ts";
import { warn } from "./warning.ts";

export interface SoulExportOptions {
  soul: string;
  /** A cluster config: its data directory, and the blueprint of the soul it names. */
  config?: string;
  /** The data directory (or a node's directory in it); by default the config's, else ./.ensoul. */
  data?: string;
  /** Only this node's directory, `<data>/<node>`; by default the node the config runs the soul on, else every node's (several holding the soul are refused). */
  node?: string;
  /** Where to write the file; the document goes to stdout when not given. */
  out?: string;
  stdout?: Writable;
}

export interface SoulImportOptions {
  file: string;
  config?: string;
  data?: string;
  /** The node whose directory receives the soul: by default the config's node for it, else `local`. */
  node?: string;
  /** The soul's id here, instead of the one it had. */
  as?: string;
  /** Replace a soul of that id already there. */
  force?: boolean;
  stdout?: Writable;
}

interface ConfiguredSoul {
  config: ClusterConfig;
  soul: SoulConfig;
}

async function configuredSoul(file: string, soulId: string): Promise<ConfiguredSoul> {
  const loaded = await loadClusterConfig(file).catch((err: unknown) => {
    throw err instanceof ConfigError ? CliError.of(err) : err;
  });
  const soul = loaded.config.souls.find((s) => s.id === soulId);
  if (!soul) throw new CliError(`${file} has no soul '${soulId}' (its souls: ${loaded.config.souls.map((s) => s.id).join(", ") || "none"})`);
  return { config: loaded.config, soul };
}

/** The node a config runs the soul on (a config that names no node runs in one process, as node `local`). */
function nodeInConfig({ config, soul }: ConfiguredSoul): string {
  const named = (config.nodes?.length ?? 0) > 0 || config.souls.some((s) => s.node !== undefined);
  return named ? nodeOf(config, soul, LOCAL_NODE) : LOCAL_NODE;
}

/** Where a config says the soul is: its node, unless automatic placement moves it (then any node may hold it). */
function placedNode(configured: ConfiguredSoul): string | undefined {
  return configured.config.placement === "auto" && configured.soul.node === undefined ? undefined : nodeInConfig(configured);
}

/** What a store error says, as the one line the CLI prints. */
function storeFailure(what: string, err: unknown): never {
  if (err instanceof StoreError) throw new CliError(`${what}: ${err.message}`, 1);
  throw err;
}

function summary(file: SoulFile): string {
  const memories = file.state.workingMemory.memories.length;
  const versions = file.userModels.reduce((n, m) => n + m.versions.length, 0);
  // Live documents of useSoulStore: a removed one stays as a null tombstone.
  const documents = file.kv.filter((e) => e.namespace === SOUL_STORE_NAMESPACE && e.key.length === 1 && e.value !== null).length;
  return [
    `blueprint ${file.soul.blueprint.name}`,
    `turn ${file.state.turn}`,
    `process ${file.state.currentProcess}`,
    `${memories} memories`,
    `${file.schedules.length} schedules`,
    `${file.userModels.length} user models (${versions} versions)`,
    `${documents} soul store documents`,
    `inbox ${file.inbox.length}, outbox ${file.outbox.length}`,
  ].join(", ");
}

/** The soul file of the soul's one copy under the data directory (soulLocation.ts: several are refused). */
function exportFrom(o: SoulExportOptions & { data: string }, blueprintName: string | undefined): Promise<{ file: SoulFile; from: string }> {
  const lookup = { soul: o.soul, data: o.data, command: "ensoul soul export", ...(o.node !== undefined ? { node: o.node } : {}) };
  return readSoul(lookup, (store, { dir }) => {
    try {
      return { file: exportSoul(store, o.soul, blueprintName !== undefined ? { blueprintName } : {}), from: dir };
    } catch (err) {
      return storeFailure(`cannot export soul '${o.soul}' from ${dir}`, err);
    }
  });
}

/** `ensoul soul export <soul>`: the soul file, to --out or stdout. */
export async function soulExportCommand(o: SoulExportOptions): Promise<SoulFile> {
  const configured = o.config !== undefined ? await configuredSoul(o.config, o.soul) : undefined;
  const data = o.data ?? configured?.config.data ?? DEFAULT_DATA_DIR;
  const blueprintName = configured ? blueprintOf(configured.soul).name : undefined;
  // The config's soul is the one on the node it runs on, whatever other nodes hold under that id.
  const node = o.node ?? (configured ? placedNode(configured) : undefined);
  const { file, from } = await exportFrom({ ...o, data, ...(node !== undefined ? { node } : {}) }, blueprintName);
  const text = serializeSoulFile(file);
  if (o.out === undefined) {
    (o.stdout ?? process.stdout).write(text);
    return file;
  }
  const target = resolve(o.out);
  // Whole or not at all: a file cut short by a full disk or a kill would not import.
  const partial = `${target}.${process.pid}.partial`;
  await writeFile(partial, text, "utf8");
  await rename(partial, target);
  (o.stdout ?? process.stdout).write(`exported soul ${o.soul} from ${from} to ${target}: ${summary(file)}\n`);
  return file;
}

async function readSoulFile(path: string): Promise<SoulFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(code === "ENOENT" ? `no soul file at ${path}` : `cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    return parseSoulFile(text, path);
  } catch (err) {
    if (err instanceof StoreError) throw new CliError(err.message);
    throw err;
  }
}

/** Where the soul goes, and a check that the blueprint that will run it is the one it was exported from. */
async function importTarget(o: SoulImportOptions, file: SoulFile, soulId: string): Promise<{ dir: string; node: string }> {
  const exported = file.soul.blueprint.name;
  if (o.config === undefined) {
    const builtin = builtinSouls[soulId];
    if (builtin && builtin.name !== exported) warn(`'${soulId}' is the builtin soul ${builtin.name}, but ${o.file} is a soul of blueprint ${exported}`);
    const node = o.node ?? LOCAL_NODE;
    return { dir: nodeDataDir(o.data, node), node };
  }
  const configured = await configuredSoul(o.config, soulId);
  const { config, soul } = configured;
  const runs = blueprintOf(soul).name;
  if (runs !== exported) {
    throw new CliError(`${o.file} is a soul of blueprint ${exported}, but ${o.config} runs '${soulId}' as ${runs}: import it as a soul of that blueprint (--as <id>)`);
  }
  const node = o.node ?? nodeInConfig(configured);
  return { dir: nodeDataDir(o.data ?? config.data, node), node };
}

/** `ensoul soul import <file>`: the soul into `<data>/<node>`, refused over an existing soul without --force. */
export async function soulImportCommand(o: SoulImportOptions): Promise<{ soulId: string; dir: string }> {
  const file = await readSoulFile(o.file);
  const soulId = o.as ?? file.soul.id;
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(soulId)) throw new CliError(`--as: '${soulId}' is not a soul id (1 to 128 of A-Z a-z 0-9 _ -)`);
  const { dir, node } = await importTarget(o, file, soulId);
  let store: Store;
  try {
    store = openStore({ path: dir });
  } catch (err) {
    storeFailure(`cannot import into ${dir}`, err);
  }
  try {
    const existing = store.actor(soulId).loadStateHeader();
    if (existing && o.force !== true) {
      throw new CliError(`soul '${soulId}' already exists in ${dir} (turn ${existing.turn}, process ${existing.currentProcess}); --force replaces it, --as <id> imports it beside it`);
    }
    const result = await importSoul(store, file, { as: soulId, replace: o.force === true }).catch((err: unknown) => {
      // Records of that id without a state (user models alone, say) are refused in the transaction.
      const hint = err instanceof StoreError && /already has data/.test(err.message) ? "; --force replaces it" : "";
      return storeFailure(`cannot import ${o.file}`, hint && err instanceof Error ? new StoreError(`${err.message}${hint}`) : err);
    });
    const replacing = result.replaced !== undefined ? `, replacing what it had there (${result.replaced})` : "";
    (o.stdout ?? process.stdout).write(`imported soul ${soulId} into ${dir} (node ${node})${replacing}: ${summary(file)}\n`);
    return { soulId, dir };
  } finally {
    await store.close();
  }
}
