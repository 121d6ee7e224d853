/** `ensoul up` with a console: `@soul text` lines reach that soul, and its answer is printed under the status. */
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { repoRoot } from "../support/cluster/cliProcess.ts";
import { startEnsoul } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs("ensoul-up-console-");
afterAll(() => dirs.cleanup());

it("talks to any soul of the cluster with @soul, and says which souls there are when the name is wrong", async () => {
  const up = startEnsoul(["up", join(repoRoot, "test/support/cluster/echoCluster.config.ts"), "--data", dirs.make(), "--status", "lines", "--console"], { timeoutMs: 60_000 });
  try {
    await up.waitFor(/talk to a soul with @<soul> <text>/, 30_000);
    up.type("@echo hello there");
    // The config's shout gate upper-cases what echo says.
    await up.waitFor(/echo: ECHO: HELLO THERE/, 20_000);
    up.type("and again");
    await up.waitFor(/echo: ECHO: AND AGAIN/, 20_000);
    up.type("@nobody hi");
    await up.waitFor(/no soul 'nobody' in this cluster \(souls: echo, sam\)/, 20_000);
  } finally {
    up.child.kill("SIGINT");
  }
  const result = await up.exited;
  expect(result.code).toBe(0);
}, 90_000);
