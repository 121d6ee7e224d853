/**
 * The data directory when none is given: `./.ensoul`. Apart from environment.ts (and behind
 * this folder's own index.ts, not the store's) so that the CLI can name it in its help without
 * loading LMDB; runtime/node/dataDirectory.ts gives the layout under it that every command shares.
 */
export const DEFAULT_PATH = "./.ensoul";
