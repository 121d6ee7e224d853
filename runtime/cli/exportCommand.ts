/**
 * `ensoul export <what> [--out file]`: a machine as `createMachine` JSON, for Stately's tools
 * (runtime/inspect/machineJson.ts says what the JSON holds). `<what>` is a soul that ships with
 * ensoul, a path to the user's own soul (as `ensoul chat` takes it), a daimon that ships with
 * ensoul, or the words `daimon` and `bridge` for those machines as such.
 *
 * A path is tried first, then the shipped souls (as `ensoul chat` does, so a name means the
 * same soul to both), then the shipped daimons, then the two words.
 */
import { rename, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Writable } from "node:stream";
import { bridgeMachineJson, daimonMachineJson, soulMachineJson, type MachineJson } from "../inspect/index.ts";
import { isSoulPath, loadSoulModule, SoulModuleError } from "../node/index.ts";
import { builtinDaimons, builtinSouls } from "../../souls/index.ts";
import { CliError } from "./CliError.ts";

export interface ExportCommandOptions {
  /** A shipped soul or daimon, a path to a soul, `daimon` or `bridge`. */
  what: string;
  /** Where to write the JSON; stdout when not given. */
  out?: string;
  stdout?: Writable;
  stderr?: Writable;
}

/** The machine `what` names, and how to name it in the confirmation. */
export async function machineFor(what: string): Promise<{ label: string; json: MachineJson }> {
  if (isSoulPath(what)) {
    try {
      const blueprint = await loadSoulModule(what);
      return { label: `soul ${blueprint.name} (${what})`, json: soulMachineJson(blueprint) };
    } catch (err) {
      if (err instanceof SoulModuleError) throw CliError.of(err);
      throw err;
    }
  }
  const soul = builtinSouls[what];
  if (soul) return { label: `soul ${soul.name}`, json: soulMachineJson(soul) };
  const daimon = builtinDaimons[what];
  if (daimon) return { label: `daimon ${daimon.name}`, json: daimonMachineJson(daimon) };
  if (what === "daimon") return { label: "a daimon", json: daimonMachineJson() };
  if (what === "bridge") return { label: "a bridge", json: bridgeMachineJson() };
  throw new CliError(
    `unknown soul '${what}'; ensoul export takes a soul that ships with ensoul (${Object.keys(builtinSouls).join(", ")}), ` +
      `a daimon that does (${Object.keys(builtinDaimons).join(", ")}), daimon, bridge, or your own soul's path (ensoul export ./souls/${what})`,
  );
}

/** Writes the machine's JSON to --out (confirmed on stderr) or to stdout (and nothing else there). */
export async function exportCommand(o: ExportCommandOptions): Promise<MachineJson> {
  const { label, json } = await machineFor(o.what);
  const text = `${JSON.stringify(json, null, 2)}\n`;
  if (o.out === undefined) {
    (o.stdout ?? process.stdout).write(text);
    return json;
  }
  const target = resolve(o.out);
  // Whole or not at all: a half-written file would not load in Stately's tools.
  const partial = `${target}.${process.pid}.partial`;
  await writeFile(partial, text, "utf8");
  await rename(partial, target);
  (o.stderr ?? process.stderr).write(`exported the machine of ${label} to ${target}\n`);
  return json;
}
