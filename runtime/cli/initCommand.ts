/**
 * `ensoul init <dir>`: a soul project to start from, like `soul-engine init`. The folder gets a
 * soul (persona, one file per mental process, an ISM phase), a cluster config, a test on the
 * offline model and a README; in it, `npm install && npm start` chats with the new soul and
 * `npm test` passes. An existing non-empty folder is never written into.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { CliError } from "./CliError.ts";
import { projectFiles } from "./scaffold/projectTemplates.ts";
import { soulFiles } from "./scaffold/soulTemplates.ts";

export interface InitOptions {
  /** The npm spec package.json depends on for ensoul (default: the version running this command). */
  ensoul?: string;
  /** The soul's display name (default: the folder's name, capitalised). */
  name?: string;
  out?: NodeJS.WritableStream;
}

/** ensoul's own package.json: its version, and the vitest it is tested with. */
function ownPackage(): { version: string; vitest: string } {
  let dir = import.meta.dirname;
  for (let i = 0; i < 6; i++) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string; devDependencies?: Record<string, string> };
      if (pkg.name === "ensoul") return { version: pkg.version ?? "0.0.0", vitest: pkg.devDependencies?.["vitest"] ?? "^4.1.0" };
    }
    dir = dirname(dir);
  }
  return { version: "0.0.0", vitest: "^4.1.0" };
}

/** A soul id from a folder name: lowercase letters, digits, `-` and `_`. */
function idOf(dir: string): string {
  const id = basename(resolve(dir)).toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "");
  if (!id) throw new CliError(`cannot make a soul id from '${dir}': name the folder with letters or digits`);
  return id;
}

export function initCommand(dir: string, options: InitOptions = {}): void {
  const target = resolve(dir);
  if (existsSync(target) && readdirSync(target).length > 0) throw new CliError(`${dir} exists and is not empty; ensoul init writes a new project into an empty or new folder`);
  const id = idOf(dir);
  const name = options.name ?? id.replace(/[-_]+/g, " ").replace(/\b\w/g, (c) => c.toUpperCase());
  const own = ownPackage();
  // A tarball or a folder given relative to here must still resolve from inside the project.
  const spec = options.ensoul ?? `^${own.version}`;
  const ensoul = /^(\.{1,2}\/|\/)/.test(spec) || /\.tgz$/.test(spec) ? `file:${resolve(spec.replace(/^file:/, ""))}` : spec;
  const files = { ...projectFiles({ id, name, ensoul, vitest: own.vitest }), ...soulFiles(id, name) };
  for (const [path, content] of Object.entries(files)) {
    const file = join(target, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  const out = options.out ?? process.stdout;
  out.write(`ensoul init: the soul ${name} in ${dir}\n\n  cd ${dir}\n  npm install\n  npm start     # chat with ${name}\n  npm test\n`);
}
