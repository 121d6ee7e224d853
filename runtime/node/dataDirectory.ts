/**
 * Where every command keeps its LMDB and looks for it: one default data directory and one
 * layout under it. A node keeps its environment in `<data>/<node>`, and a process that runs
 * souls by itself (`ensoul demo`, `ensoul chat`, `ensoul up` without NATS) is node `local`,
 * so after `npm start` the chat, the memory command and the next demo meet the same souls
 * in `./.ensoul/local`.
 *
 * The default path itself is the store's (runtime/store/defaults/), read through that
 * folder's index.ts, which loads no LMDB, so the CLI's help can show it at once.
 */
import { join, resolve } from "node:path";
import { DEFAULT_PATH } from "../store/defaults/index.ts";

/** The data directory of every command when none is given. */
export const DEFAULT_DATA_DIR = DEFAULT_PATH;

/** The node that runs souls by itself, in one process on the in-process bus. */
export const LOCAL_NODE = "local";

/** A node's LMDB environment: `<data>/<node>`, the data directory resolved against the working directory. */
export function nodeDataDir(data: string | undefined, nodeId: string): string {
  return join(resolve(data ?? DEFAULT_DATA_DIR), nodeId);
}
