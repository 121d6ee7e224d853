/**
 * `ensoul soul export|import` on the command line. Kept apart from soulCommand.ts so that
 * main.ts can register it without loading LMDB or the node: the action imports the command
 * when it runs, as every other command does.
 */
import type { Command } from "commander";

export function registerSoulCommand(program: Command): void {
  const soul = program
    .command("soul")
    .description("move a soul between data directories or clusters: export it as one JSON file (docs/SOUL-FILE.md), import it elsewhere");

  soul
    .command("export")
    .description("write everything a soul is (memory, process, schedules, user models, pending work) as one JSON document; works beside a running node")
    .argument("<soul>", "the soul's id")
    .argument("[config]", "cluster config: its data directory, and the soul's blueprint")
    .option("-o, --out <file>", "write the document to this file (default: stdout)")
    .option("-d, --data <dir>", "data directory, or a node's directory in it (default: the config's, else ./.ensoul)")
    .option("-n, --node <name>", "read only <data>/<node> (default: the node the config runs the soul on): needed when several nodes there hold a soul of that id")
    .action(async (soulId: string, config: string | undefined, opts: { out?: string; data?: string; node?: string }) => {
      const { soulExportCommand } = await import("./soulCommand.ts");
      await soulExportCommand({ soul: soulId, ...defined({ config, out: opts.out, data: opts.data, node: opts.node }) });
    });

  soul
    .command("import")
    .description("restore a soul file into a data directory (refused while a node runs on it); a node started there continues the soul")
    .argument("<file>", "the soul file (from ensoul soul export)")
    .argument("[config]", "cluster config: its data directory, the soul's node, and a check of the soul's blueprint")
    .option("-d, --data <dir>", "data directory; the soul goes to <dir>/<node> (default: the config's, else ./.ensoul)")
    .option("-n, --node <name>", "the node that will run the soul (default: the config's node for it, else local)")
    .option("--as <soulId>", "import under this id instead of the exported one")
    .option("--force", "replace a soul of that id that is already there")
    .action(async (file: string, config: string | undefined, opts: { data?: string; node?: string; as?: string; force?: boolean }) => {
      const { soulImportCommand } = await import("./soulCommand.ts");
      await soulImportCommand({ file, force: opts.force === true, ...defined({ config, data: opts.data, node: opts.node, as: opts.as }) });
    });
}

/** The options that were given: with exactOptionalPropertyTypes, an absent flag is no field at all. */
function defined<T extends Record<string, string | undefined>>(values: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: string };
}
