/**
 * One process per data directory. LMDB itself would let two processes write one environment
 * (its write lock serialises their transactions), but each would run the same souls from the
 * same state: both commit "turn 13", and one process's turns and speech vanish under the
 * other's. So a store that writes takes the directory first, with a lock file naming its
 * holder, and a second process gets an error that names it (pid, command, since when).
 *
 * The lock file (`ensoul.lock`, JSON) is created whole or not at all: written to a temporary
 * file and hard-linked into place, which fails if it exists. A lock whose holder is gone is
 * stale and taken over: a process killed with SIGKILL (or by the OOM killer, or a power cut)
 * leaves its file behind, and that must not block the restart. "Gone" means no such process
 * (`kill(pid, 0)` says ESRCH), a zombie, or a live process with a different start time (the
 * pid was reused; Linux tells through /proc), or this very pid when this process does not
 * hold it (a container whose node is pid 1 every time). A holder on another host (a shared
 * network directory) cannot be checked, so it is respected and the error says so.
 *
 * Taking over a stale lock is serialised by a second, short-lived file (`ensoul.lock.break`,
 * created exclusively): of two processes starting together after a crash, one removes the
 * stale lock and the other then finds the new holder, instead of both removing and both
 * taking it. A reader (`StoreOptions.reader`) takes no lock at all: reads never conflict.
 */
import { linkSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import { StoreError } from "./types.ts";

export const LOCK_FILE = "ensoul.lock";

interface Holder {
  pid: number;
  host: string;
  /** Epoch ms when it took the directory. */
  since: number;
  /** What it runs, e.g. `ensoul demo`, for the error a second process sees. */
  command: string;
  /** Its start time in clock ticks since boot (Linux), to tell a reused pid. */
  start?: string;
}

export interface DataDirLock {
  readonly file: string;
  /** Gives the directory up. Idempotent; leaves a lock that is no longer this one's alone. */
  release(): void;
}

/**
 * The lock files this process holds, by content (unique: it has a random token), so that a
 * second open here, under whatever path, is refused as it would be in another process.
 */
const held = new Map<string, string>();
let exitHooked = false;

/** An exiting process gives up what it holds (a killed one cannot: its locks go stale instead). */
function releaseAllOnExit(): void {
  for (const [text, file] of held) if (read(file) === text) tryUnlink(file);
  held.clear();
}

/** Takes the data directory (an absolute path that exists) for this process, or throws a StoreError naming its holder. */
export function lockDataDir(dir: string): DataDirLock {
  const file = join(dir, LOCK_FILE);
  const me: Holder = { pid: process.pid, host: hostname(), since: Date.now(), command: commandLine(), ...startTime(process.pid) };
  const text = JSON.stringify({ ...me, token: Math.random().toString(36).slice(2) });
  for (let attempt = 0; attempt < 20; attempt++) {
    if (create(file, text)) {
      held.set(text, file);
      if (!exitHooked) {
        exitHooked = true;
        process.once("exit", releaseAllOnExit);
      }
      let released = false;
      return {
        file,
        release() {
          if (released) return;
          released = true;
          held.delete(text);
          if (read(file) === text) tryUnlink(file);
        },
      };
    }
    const current = read(file);
    if (current === undefined) continue; // removed meanwhile: try again
    const holder = parse(current);
    if (holder && holder.pid === process.pid && held.has(current)) throw inUse(dir, file, holder, "this process");
    if (holder && alive(holder)) throw inUse(dir, file, holder);
    breakStale(file, current);
  }
  throw new StoreError(`cannot take data directory ${dir}: its lock file ${file} keeps changing; is another process starting on it?`);
}

/** Creates the lock file with its whole content, or returns false when it exists. */
function create(file: string, text: string): boolean {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    writeFileSync(temp, text, { flag: "wx" });
    try {
      linkSync(temp, file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A file system without hard links: an exclusive create, whose content follows at once.
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "ENOSYS" && code !== "EXDEV") throw err;
      writeFileSync(file, text, { flag: "wx" });
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new StoreError(`cannot take data directory ${join(file, "..")}: ${(err as Error).message}`, { cause: err });
  } finally {
    tryUnlink(temp);
  }
}

/** Removes the stale lock if it is still the one read, under the breaker file. */
function breakStale(file: string, stale: string): void {
  const breaker = `${file}.break`;
  if (!create(breaker, JSON.stringify({ pid: process.pid, host: hostname(), since: Date.now(), command: "" }))) {
    // Someone else is taking it over now; a breaker left by a process killed mid-way is stale too.
    const other = parse(read(breaker) ?? "");
    if (other && !alive(other)) tryUnlink(breaker);
    pause(5);
    return;
  }
  try {
    if (read(file) === stale) tryUnlink(file);
  } finally {
    tryUnlink(breaker);
  }
}

function alive(holder: Holder): boolean {
  if (holder.host !== hostname()) return true; // cannot tell: respect it
  if (holder.pid === process.pid) return false; // not held here (checked before): a previous process with this pid
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM"; // alive, another user's
  }
  const now = procStat(holder.pid);
  if (now === undefined) return true; // no /proc: the pid exists, take it as the holder
  if (now.state === "Z" || now.state === "X") return false;
  return holder.start === undefined || holder.start === now.start;
}

function inUse(dir: string, file: string, holder: Holder, who?: string): StoreError {
  const what = who ?? (holder.command || "unknown command");
  const where = holder.host === hostname() ? "" : ` on host ${holder.host}`;
  // A pid seen from another pid namespace (a container sharing the directory) may look alive.
  const stale = who === undefined ? `; if that process is not running${where ? " there" : ""}, delete ${file}` : "";
  return new StoreError(
    `data directory ${dir} is in use by process ${holder.pid} (${what}, since ${new Date(holder.since).toISOString()})${where}. ` +
      `A data directory is used by one process at a time: stop that process first, or use another data directory (--data)${stale}`,
  );
}

function parse(text: string): Holder | undefined {
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    if (!Number.isSafeInteger(value.pid) || typeof value.host !== "string") return undefined;
    return { pid: value.pid!, host: value.host, since: Number(value.since) || 0, command: String(value.command ?? ""), ...(typeof value.start === "string" ? { start: value.start } : {}) };
  } catch {
    return undefined;
  }
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function tryUnlink(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/** The process's state and start time from /proc/<pid>/stat (Linux); undefined elsewhere. */
function procStat(pid: number): { state: string; start: string } | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // After the command name in parentheses (which may hold spaces): state is field 3, starttime field 22.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const start = fields[19];
  return state && start ? { state, start } : undefined;
}

function startTime(pid: number): { start?: string } {
  const start = procStat(pid)?.start;
  return start ? { start } : {};
}

function commandLine(): string {
  const script = process.argv[1] ? basename(process.argv[1]).replace(/\.[cm]?[jt]s$/, "") : "node";
  return [script === "ensoul" ? "ensoul" : script, ...process.argv.slice(2, 3)].join(" ");
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
