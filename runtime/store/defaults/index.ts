/**
 * The store's defaults, in a folder of their own so that the CLI can name them in its help
 * without loading LMDB (runtime/store/index.ts loads it).
 */
export { DEFAULT_PATH } from "./defaultPath.ts";
