/**
 * A soul in and out of the store as a soul file (soulFileFormat.ts, docs/SOUL-FILE.md): the
 * store's dump of the actor (ActorTransfer.ts) arranged for people and other programs to
 * read, with the user models by user and every value JSON cannot hold tagged
 * (soulFileValues.ts). An export, an import and a second export give the same document but
 * for `exportedAt` (and `soul.id`, when imported under another id).
 *
 * It needs only the store, so it lives in the kernel: the CLI (runtime/cli/soulCommand.ts)
 * finds the data directory and the blueprint's name, and this moves the soul.
 */
import type { ActorDump, ActorKvEntry } from "./ActorTransfer.ts";
import { assertActorId } from "./keys.ts";
import { SOUL_FILE_FORMAT, SOUL_FILE_VERSION, SoulFileError, type SoulFile, type SoulFileState, type SoulFileUserModel } from "./soulFileFormat.ts";
import { toJsonValue } from "./soulFileValues.ts";
import type { Store } from "./Store.ts";
import { StoreError, type ActorState } from "./types.ts";
import { userModelKey, userOfModelKey } from "./userModelKeys.ts";
import { USER_MODELS_NAMESPACE, type UserModelVersion } from "./userModels.ts";

export interface ExportSoulOptions {
  /** The blueprint's name; by default the one the soul's working memory was made for (`soulName`). */
  blueprintName?: string;
  /** The export time (tests fix it). */
  now?: Date;
}

function isVersion(value: unknown): value is UserModelVersion {
  const v = value as UserModelVersion;
  return typeof v === "object" && v !== null && Number.isInteger(v.version) && typeof v.markdown === "string" && typeof v.changeNote === "string" && typeof v.ts === "number";
}

/**
 * The user whose model version this kv entry is, or undefined. Only an entry the import
 * writes back under the very same key counts: anything else the namespace holds travels as
 * a plain kv entry, so nothing is lost either way.
 */
function userModelEntry(entry: ActorKvEntry): { user: string; version: UserModelVersion } | undefined {
  if (entry.namespace !== USER_MODELS_NAMESPACE || !isVersion(entry.value)) return undefined;
  const user = userOfModelKey(entry.key);
  if (user === undefined || entry.key.at(-1) !== entry.value.version) return undefined;
  return { user, version: entry.value };
}

/** The user models by user; whatever else the namespace holds stays with the other kv entries. */
function splitUserModels(kv: readonly ActorKvEntry[]): { userModels: SoulFileUserModel[]; rest: ActorKvEntry[] } {
  const userModels: SoulFileUserModel[] = [];
  const rest: ActorKvEntry[] = [];
  for (const entry of kv) {
    const found = userModelEntry(entry);
    if (!found) {
      rest.push(entry);
      continue;
    }
    const last = userModels.at(-1);
    if (last?.user === found.user) last.versions.push(found.version);
    else userModels.push({ user: found.user, versions: [found.version] });
  }
  return { userModels, rest };
}

/** The state in a fixed field order, so two exports of one soul are the same bytes. */
function fileState(state: ActorState): SoulFileState {
  const { turn, currentProcess, previousProcess, invocationCounts, workingMemory, soulMemory, processMemory, metadata, snapshot, ...other } = state;
  const extra = Object.keys(other);
  // A field this version does not know would be lost on import: refuse now rather than then.
  if (extra.length > 0) throw new StoreError(`the soul's state has fields this ensoul cannot export: ${extra.join(", ")}`);
  const nextParams = (snapshot as { context?: { nextParams?: Record<string, unknown> | null } } | undefined)?.context?.nextParams ?? null;
  return {
    turn,
    currentProcess,
    ...(previousProcess !== undefined ? { previousProcess } : {}),
    nextParams,
    invocationCounts: invocationCounts ?? {},
    workingMemory: workingMemory as SoulFileState["workingMemory"],
    soulMemory: soulMemory ?? {},
    processMemory: processMemory ?? {},
    ...(metadata !== undefined ? { metadata } : {}),
    ...(snapshot !== undefined ? { snapshot } : {}),
  };
}

/** The soul as a soul file. Throws a StoreError for a soul the store has no state of, naming the souls it has. */
export function exportSoul(store: Store, soulId: string, options: ExportSoulOptions = {}): SoulFile {
  const dump = store.actor(soulId).dump();
  if (!dump) {
    const known = store.actorIds();
    throw new StoreError(`unknown soul '${soulId}' in ${store.path} (souls there: ${known.join(", ") || "none"})`);
  }
  const state = fileState(dump.state);
  if (!Array.isArray(state.workingMemory?.memories)) throw new StoreError(`soul '${soulId}' in ${store.path} has no working memory to export`);
  const soulName = (state.workingMemory as { soulName?: unknown }).soulName;
  const blueprintName = options.blueprintName ?? (typeof soulName === "string" ? soulName : soulId);
  const { userModels, rest } = splitUserModels(dump.kv);
  return {
    format: SOUL_FILE_FORMAT,
    formatVersion: SOUL_FILE_VERSION,
    exportedAt: (options.now ?? new Date()).toISOString(),
    soul: { id: soulId, blueprint: { name: blueprintName } },
    state,
    schedules: dump.schedules,
    userModels,
    kv: rest,
    inbox: dump.inbox,
    outbox: dump.outbox,
  };
}

/** The soul file's text: JSON with tagged values, two-space indented, one line at the end. */
export function serializeSoulFile(file: SoulFile): string {
  return `${JSON.stringify(toJsonValue(file, "soul file"), null, 2)}\n`;
}

/** The store's dump of a soul file: user models back under their keys, `nextParams` left to the snapshot. */
function dumpOf(file: SoulFile): ActorDump {
  const { nextParams: _shown, ...state } = file.state;
  const userModelKv: ActorKvEntry[] = file.userModels.flatMap(({ user, versions }) =>
    versions.map((v) => ({ namespace: USER_MODELS_NAMESPACE, key: userModelKey(user, v.version), value: v })),
  );
  for (const entry of file.kv) {
    if (userModelEntry(entry)) {
      throw new SoulFileError(`kv: the entry ${JSON.stringify(entry.key)} of namespace ${USER_MODELS_NAMESPACE} is a user model version: it belongs in userModels`);
    }
  }
  return { state, inbox: file.inbox, outbox: file.outbox, schedules: file.schedules, kv: [...userModelKv, ...file.kv] };
}

export interface ImportSoulOptions {
  /** The soul's id here; by default the one it had (`soul.id`). */
  as?: string;
  /** Replace a soul of that id that is already here (else refused). */
  replace?: boolean;
}

export interface ImportSoulResult {
  soulId: string;
  /** What the soul of that id had here before, when it was replaced. */
  replaced?: string;
}

/**
 * Writes the soul into the store in one transaction; nothing is written if anything is
 * refused. The soul must not be live on this store meanwhile (a node running it would go on
 * from the state it holds): the CLI makes sure by taking the data directory's lock.
 */
export async function importSoul(store: Store, file: SoulFile, options: ImportSoulOptions = {}): Promise<ImportSoulResult> {
  const soulId = assertActorId(options.as ?? file.soul.id);
  const result = await store.actor(soulId).restore(dumpOf(file), { replace: options.replace === true });
  return { soulId, ...result };
}
