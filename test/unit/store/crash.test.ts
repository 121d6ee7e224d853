import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { crashState, sampleOutbox } from "../../support/store/fixtures.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();
const root = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const child = join(root, "test/support/store/crashChild.ts");

/** Runs the child until it has reported `after` more commits, SIGKILLs it soon after, and returns the last turn it reported before dying. */
function commitThenKill(dir: string, after: number): Promise<{ started: number; lastReported: number }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--import", "tsx", child, dir], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let started = -1;
    let lastReported = -1;
    let seen = 0;
    let buffered = "";
    let stderr = "";
    proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    proc.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        const [word, n] = line.split(" ");
        if (word === "START") started = Number(n);
        if (word === "COMMITTED") {
          lastReported = Number(n);
          // A random sub-turn delay, so the kill lands anywhere in the next receive or commit.
          if (++seen === after) setTimeout(() => proc.kill("SIGKILL"), Math.random() * 3);
        }
      }
    });
    proc.on("error", reject);
    proc.on("exit", (code, signal) => {
      if (signal === "SIGKILL") resolve({ started, lastReported });
      else reject(new Error(`crash child exited with ${code ?? signal} before being killed:\n${stderr}`));
    });
  });
}

describe("a process killed with SIGKILL mid-turn", () => {
  it("leaves exactly one whole committed turn, never a torn one, and never loses a reported commit", async () => {
    const dir = stores.dir();
    let previous = 0;
    for (const after of [40, 7, 150, 1, 90, 25, 60, 3, 120, 15]) {
      const { started, lastReported } = await commitThenKill(dir, after);
      expect(started).toBe(previous);

      const store = stores.open({ path: dir });
      const actor = store.actor("crashy");
      const turn = actor.loadState()?.turn ?? 0;
      // Every commit the child saw resolve survived the kill (the kill may land after more).
      expect(turn).toBeGreaterThanOrEqual(lastReported);
      expect(turn).toBeGreaterThan(previous);
      // The state is exactly that turn's, byte for byte.
      expect(actor.loadState()).toEqual(crashState(turn));
      // Inbox: turns 1..turn done; at most the next one received and still pending; nothing later.
      for (let t = 1; t <= turn; t++) expect(actor.inboxEntry(`p-${t}`)?.status).toBe("done");
      const next = actor.inboxEntry(`p-${turn + 1}`);
      if (next) expect(next.status).toBe("pending");
      expect(actor.inboxEntry(`p-${turn + 2}`)).toBeUndefined();
      expect(actor.pendingInbox().map((e) => e.id)).toEqual(next ? [`p-${turn + 1}`] : []);
      // Outbox: exactly both entries of every committed turn, in order.
      const expected = Array.from({ length: turn }, (_, i) => [sampleOutbox(i + 1, 0), sampleOutbox(i + 1, 1)]).flat();
      expect(actor.pendingOutbox()).toEqual(expected);
      await store.close();
      previous = turn;
    }
  }, 60_000);
});
