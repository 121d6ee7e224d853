/**
 * `ensoul demo --debug [port]` as a user runs it: the real binary prints where the debugger is
 * (never the token), serves the fleet while the demo runs, and refuses a port it cannot have
 * with one clear line.
 */
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { runEnsoul, startEnsoul } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs("ensoul-debug-");
afterEach(() => dirs.cleanup());

const TOKEN = "cli-debug-token-93af";
const URL_LINE = /ensoul demo: debugger at (http:\/\/127\.0\.0\.1:(\d+)\/)/;

describe("ensoul demo --debug", () => {
  it("prints the debugger's URL without the token and serves the demo's souls until the demo ends", async () => {
    const session = startEnsoul(["demo", "--data", dirs.make(), "--user", "Tom", "--debug", "0"], { env: { USER: "tom", ENSOUL_DEBUG_TOKEN: TOKEN } });
    await session.waitFor(URL_LINE, 30_000);
    const url = URL_LINE.exec(session.stdout())![1]!;
    expect(Number(URL_LINE.exec(session.stdout())![2])).toBeGreaterThan(0);
    expect((await fetch(new URL("/api/souls", url))).status).toBe(401);
    const res = await fetch(new URL("/api/souls", url), { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const fleet = (await res.json()) as { cluster: string; souls: { id: string; node: string }[] };
    expect(fleet.souls).toEqual(expect.arrayContaining([expect.objectContaining({ id: "claudius", node: "local" })]));
    session.child.stdin.end();
    const result = await session.exited;
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
    // Stopped with the node: nothing listens there any more.
    await expect(fetch(new URL("/api/souls", url))).rejects.toThrow();
  }, 60_000);

  it("refuses a port in use with a clear error and exit 1, and a port that is not one with exit 2", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const busy = await runEnsoul(["demo", "--data", dirs.make(), "--debug", String(port)], { env: { USER: "tom" }, lines: ["hello"] });
      expect(busy.code).toBe(1);
      expect(busy.stderr).toContain(`--debug: cannot listen on 127.0.0.1:${port} (the port is in use`);
    } finally {
      blocker.close();
    }
    const bad = await runEnsoul(["demo", "--data", dirs.make(), "--debug", "eighty"], { env: { USER: "tom" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--debug takes a port (0-65535");
  }, 60_000);
});
