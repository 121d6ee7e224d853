/**
 * Where in a soul's own source an error was thrown: the first frame of its stack past Node's
 * own and the packages in `node_modules` (a library the soul called, `JSON.parse`, zod), when
 * that frame is the soul's code. When it is ensoul's runtime instead (its `actors`, `runtime`,
 * `bridges` and `api` folders, from source or `dist/`), the error is the runtime's (a provider
 * that failed, a budget spent, a hand-over refused), whose message says what, and no place is
 * named. A blueprint that ships with ensoul (`souls/`) is soul code too.
 *
 * The stack names the soul's own files and lines because source maps are on wherever a soul is
 * compiled: tsx turns them on for TypeScript, and a soul module loaded from a path turns them on
 * for JavaScript built with its map (runtime/node/soulModule.ts). The file is shown relative to
 * the working directory when it lies inside it, as the person typed the soul's path.
 */
import { isAbsolute, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** ensoul's own root: this file is `<root>/actors/soul/soulSource.{ts,js}` (from source, or under `dist/`). */
const root = fileURLToPath(new URL("../../", import.meta.url));
const RUNTIME_FOLDERS = ["actors", "runtime", "bridges", "api"].map((folder) => `${root}${folder}${sep}`);

/** `    at fn (file:line:col)`, `    at file:line:col`, `    at async fn (file:line:col)`. */
const FRAME = /^\s*at (?:.*? \()?(.+?):(\d+):(\d+)\)?\s*$/;

/** `<file>:<line>:<column>` of the soul's code that threw `error`, when its stack shows one. */
export function soulSourceOf(error: unknown, cwd = process.cwd()): string | undefined {
  const stack = (error as { stack?: unknown } | null)?.stack;
  if (typeof stack !== "string") return undefined;
  for (const line of stack.split("\n")) {
    const frame = FRAME.exec(line);
    if (!frame) continue;
    const file = fileOf(frame[1]!);
    if (file === undefined || file.includes(`${sep}node_modules${sep}`)) continue;
    return RUNTIME_FOLDERS.some((folder) => file.startsWith(folder)) ? undefined : `${shownPath(file, cwd)}:${frame[2]}:${frame[3]}`;
  }
  return undefined;
}

/** A path from a frame (`file://` URLs as ESM without a loader prints them); nothing for Node's own and eval'd code. */
function fileOf(location: string): string | undefined {
  if (location.startsWith("file://")) {
    try {
      return fileURLToPath(location);
    } catch {
      return undefined;
    }
  }
  return isAbsolute(location) ? location : undefined;
}

/** A file as a person at `cwd` names it: relative when inside it, else whole. */
export function shownPath(file: string, cwd = process.cwd()): string {
  const rel = relative(cwd, file);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}
