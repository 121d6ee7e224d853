/**
 * `ensoul up` with a bridge that cannot start: the start stops with the bridge's error, one
 * line and exit 1, and never says `ready` (before, it logged the failure and then printed
 * `ready`, with nobody listening where the config put the soul). The in-process cases,
 * `optional: true` among them, are in test/integration/bridges/bridgeStart.test.ts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runEnsoul } from "../../support/cli/runEnsoul.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-bridge-start-");
afterAll(() => dirs.cleanup());

describe("ensoul up with a bridge that cannot start", () => {
  it("an HTTP bridge without ENSOUL_HTTP_TOKEN stops the start with one line naming it; no ready", async () => {
    const dir = dirs.make();
    const config = join(dir, "ensoul.yaml");
    writeFileSync(config, "cluster: web\nsouls:\n  - { id: sam, blueprint: samantha }\nbridges:\n  - { type: http, soul: sam, options: { port: 0 } }\n");
    const up = await runEnsoul(["up", config, "--data", join(dir, "data"), "--status", "off"], { timeoutMs: 30_000 });
    expect(up.stdout).not.toContain("ready");
    expect(up.stderr).toBe(
      "ensoul: bridge http-sam (http, soul sam) cannot start: http bridge http-sam: set ENSOUL_HTTP_TOKEN (the bearer token its clients send); it is never printed; mark it optional: true in the config to start without it\n",
    );
    expect(up.code).toBe(1);
  });
});
