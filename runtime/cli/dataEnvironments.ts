/**
 * The LMDB environments under a data directory, for the commands that read souls from disk
 * (`ensoul memory`, `ensoul soul export`): one per node below it, then the directory itself
 * when it is an environment (given as `<data>/<node>`, or written by an `ensoul chat` from
 * before every command shared the node layout).
 */
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { CliError } from "./CliError.ts";

export interface DataEnvironment {
  dir: string;
  /** The node it belongs to, or `(local)` for the directory itself. */
  node: string;
}

export function dataEnvironments(data: string): DataEnvironment[] {
  const root = resolve(data);
  if (!existsSync(root)) throw new CliError(`no data directory at ${data}`);
  const nodes = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(root, e.name, "data.mdb")))
    .map((e) => ({ dir: join(root, e.name), node: e.name }));
  return existsSync(join(root, "data.mdb")) ? [...nodes, { dir: root, node: "(local)" }] : nodes;
}
