/**
 * The LMDB environments under a data directory, for the commands that read souls from disk
 * (`ensoul memory`, `ensoul soul export`): one per node below it, then the directory itself
 * when it is an environment (given as `<data>/<node>`, or written by an `ensoul chat` from
 * before every command shared the node layout). With a node named, only `<data>/<node>`.
 */
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { CliError } from "./CliError.ts";

export interface DataEnvironment {
  dir: string;
  /** The node it belongs to, or `(local)` for the directory itself. */
  node: string;
}

export function dataEnvironments(data: string, node?: string): DataEnvironment[] {
  const root = resolve(data);
  if (node !== undefined) {
    // A name, never a path: `--node ../elsewhere` reads nothing outside the data directory.
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(node)) throw new CliError(`--node: '${node}' is not a node name (1 to 128 of A-Z a-z 0-9 _ -)`);
    const dir = join(root, node);
    if (!existsSync(join(dir, "data.mdb"))) throw new CliError(`no LMDB data for node ${node} in ${dir}`);
    return [{ dir, node }];
  }
  if (!existsSync(root)) throw new CliError(`no data directory at ${data}`);
  const nodes = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(root, e.name, "data.mdb")))
    .map((e) => ({ dir: join(root, e.name), node: e.name }))
    .sort((x, y) => (x.node < y.node ? -1 : 1));
  const found = existsSync(join(root, "data.mdb")) ? [...nodes, { dir: root, node: "(local)" }] : nodes;
  if (found.length === 0) throw new CliError(`no LMDB data in ${data} (nor in a node directory below it)`);
  return found;
}
