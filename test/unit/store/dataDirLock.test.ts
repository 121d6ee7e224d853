/**
 * One process per data directory: two processes writing one LMDB environment would both
 * commit "the next turn" of the same soul, and one's turns would vanish. A second process gets
 * a clear error naming the holder; a holder killed with SIGKILL leaves a lock that does not
 * block the next start. The holders here are real child processes (crashChild.ts: it opens
 * the store and commits turns until it is killed).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openStore, StoreError } from "../../../runtime/store/index.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();
const root = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const child = join(root, "test/support/store/crashChild.ts");

interface Holder {
  proc: ChildProcessWithoutNullStreams;
  /** Resolves once the child has the store open and committed a turn, rejects if it exits first. */
  opened: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

function startHolder(dir: string): Holder {
  const proc = spawn(process.execPath, ["--import", "tsx", child, dir], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    proc.on("exit", (code, signal) => resolve({ code, signal, stderr })),
  );
  const opened = new Promise<void>((resolve, reject) => {
    proc.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      if (/^COMMITTED \d+$/m.test(stdout)) resolve();
    });
    void exited.then(({ code, signal }) => reject(new Error(`the holder exited (${code ?? signal}) before opening the store:\n${stderr}`)));
  });
  opened.catch(() => undefined);
  return { proc, opened, exited };
}

async function kill(holder: Holder): Promise<void> {
  holder.proc.kill("SIGKILL");
  await holder.exited;
}

describe("a data directory held by a process", () => {
  it("refuses a second process with an error naming the holder's pid, and a SIGKILLed holder does not block the next", async () => {
    const dir = stores.dir();
    const first = startHolder(dir);
    try {
      await first.opened;
      const pid = first.proc.pid!;
      let refused: unknown;
      try {
        openStore({ path: dir });
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(StoreError);
      expect((refused as Error).message).toMatch(new RegExp(`^data directory ${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is in use by process ${pid} \\(`));
      expect((refused as Error).message).toMatch(/one process at a time/);
    } finally {
      await kill(first);
    }

    // Killed: its lock is stale. This process takes the directory, and a child is refused.
    const store = stores.open({ path: dir });
    expect(store.actor("crashy").loadState()?.turn).toBeGreaterThanOrEqual(1);
    const second = startHolder(dir);
    const refused = await second.exited;
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`data directory ${dir} is in use by process ${process.pid}`);

    // Closed: free again, for a child this time, which then holds it until killed.
    await store.close();
    const third = startHolder(dir);
    await third.opened;
    await kill(third);
    const again = openStore({ path: dir });
    await again.close();
  }, 60_000);

  it("is free again once its store is closed, in the same process", async () => {
    const dir = stores.dir();
    const first = openStore({ path: dir });
    expect(() => openStore({ path: dir })).toThrow(/is in use by process \d+ \(this process/);
    await first.close();
    const second = openStore({ path: dir });
    await second.close();
  });

  it("lets a reader look at a held directory without taking it, and refuses the reader's writes", async () => {
    const dir = stores.dir();
    const writer = openStore({ path: dir });
    await writer.actor("a").receive("p-1", { n: 1 });
    const reader = openStore({ path: dir, reader: true });
    try {
      expect(reader.actor("a").inboxEntry("p-1")?.status).toBe("pending");
      await expect(reader.actor("a").receive("p-2", { n: 2 })).rejects.toThrow(/opened to read only/);
    } finally {
      await reader.close();
    }
    // The reader's close does not free the writer's lock.
    expect(() => openStore({ path: dir })).toThrow(/is in use by process/);
    await writer.close();
  });
});
