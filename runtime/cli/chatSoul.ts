/**
 * Which soul `ensoul chat <soul>` talks to, and with which blueprint: a path runs the user's
 * own soul (its id: the file or folder name); a shipped soul's id runs that soul; any other id
 * is a soul already in the data directory's `local` node, run with the shipped blueprint its
 * soul file recorded. A soul imported with `ensoul soul import --as claudius2` is such a
 * soul: its id is new, its blueprint is Claudius.
 *
 * The store keeps that name as the working memory's `soulName`: the blueprint's name when the
 * soul was first made, and what `ensoul soul export` writes as `soul.blueprint.name`.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { SoulBlueprint } from "../../actors/soul/index.ts";
import { builtinSouls } from "../../souls/index.ts";
import { isSoulPath, loadSoulModule, LOCAL_NODE, nodeDataDir, soulIdOfPath, SoulModuleError } from "../node/index.ts";
import { openStore } from "../store/index.ts";
import { CliError } from "./CliError.ts";

/** The shipped blueprint of this name (`Claudius`), if one ships. */
function shippedNamed(name: string): SoulBlueprint | undefined {
  return Object.values(builtinSouls).find((b) => b.name === name);
}

/** The souls of `<data>/local` and the blueprint name each was made with (read as a reader: a running node may hold it). */
async function storedSoul(id: string, data: string): Promise<{ dir: string; ids: string[]; blueprintName?: string }> {
  const dir = nodeDataDir(data, LOCAL_NODE);
  if (!existsSync(join(dir, "data.mdb"))) return { dir, ids: [] };
  const store = openStore({ path: dir, reader: true });
  try {
    const soulName = (store.actor(id).loadState()?.workingMemory as { soulName?: unknown } | undefined)?.soulName;
    return { dir, ids: store.actorIds(), ...(typeof soulName === "string" ? { blueprintName: soulName } : {}) };
  } finally {
    await store.close();
  }
}

/** A soul in the data directory under an id no shipped soul has: run with the shipped blueprint it was made with. */
async function recordedBlueprint(id: string, data: string): Promise<SoulBlueprint> {
  const stored = await storedSoul(id, data);
  if (stored.blueprintName === undefined) {
    const there = stored.ids.length > 0 ? `; souls in ${stored.dir}: ${stored.ids.join(", ")}` : "";
    throw new CliError(`unknown soul '${id}'; the souls that ship with ensoul are: ${Object.keys(builtinSouls).join(", ")}${there}; and your own is a path (ensoul chat ./souls/${id})`);
  }
  const blueprint = shippedNamed(stored.blueprintName);
  if (!blueprint) {
    throw new CliError(
      `soul '${id}' in ${stored.dir} is a soul of blueprint ${stored.blueprintName}, which does not ship with ensoul: ` +
        `run it with its blueprint from a cluster config (souls: [{ id: ${id}, blueprint: ./path/to/its/soul }]) and ensoul up`,
    );
  }
  return blueprint;
}

/** The soul `ref` names (see the file comment), its id and its blueprint. */
export async function soulToChat(ref: string, data: string): Promise<{ id: string; blueprint: SoulBlueprint }> {
  if (isSoulPath(ref)) {
    try {
      return { id: soulIdOfPath(ref), blueprint: await loadSoulModule(ref) };
    } catch (err) {
      if (err instanceof SoulModuleError) throw CliError.of(err);
      throw err;
    }
  }
  const shipped = builtinSouls[ref];
  return { id: ref, blueprint: shipped ?? (await recordedBlueprint(ref, data)) };
}
