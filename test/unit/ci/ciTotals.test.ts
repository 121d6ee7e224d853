/**
 * CI cannot hide a failure: `.ci/run`'s totals count unhandled errors and unloadable
 * files as failures and name skipped tests, and a missing nats-server fails any CI run,
 * whatever `CI` is set to. Each case runs a real vitest on small fixture files.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunTotals } from "../../support/ci/totalsReporter.ts";
import { inCi } from "../../support/ci/inCi.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const repo = resolve(import.meta.dirname, "../../..");
const vitestBin = join(repo, "node_modules/vitest/vitest.mjs");
const reporter = join(repo, "test/support/ci/totalsReporter.ts");
const dirs = tempDirs("ensoul-ci-");
afterAll(() => dirs.cleanup());

function runFixtures(files: Record<string, string>, env: Record<string, string | undefined>): { totals: RunTotals; status: number | null } {
  const dir = dirs.make();
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  writeFileSync(join(dir, "vitest.config.mjs"), `export default { test: { include: [${JSON.stringify(join(dir, "*.test.ts"))}] } };`);
  const totalsFile = join(dir, "totals.json");
  const result = spawnSync(
    process.execPath,
    [vitestBin, "run", "--root", dir, "--config", join(dir, "vitest.config.mjs"), "--reporter=dot", `--reporter=${reporter}`],
    { env: { ...process.env, ...env, ENSOUL_TOTALS_FILE: totalsFile }, encoding: "utf8", timeout: 60_000 },
  );
  return { totals: JSON.parse(readFileSync(totalsFile, "utf8")) as RunTotals, status: result.status };
}

describe(".ci/run totals", () => {
  it("count an unhandled error and an unloadable file as failures, and name each skipped test", () => {
    const { totals, status } = runFixtures(
      {
        "late.test.ts": `import { it } from "vitest";
it("passes, then something rejects unhandled", async () => {
  setTimeout(() => { void Promise.reject(new Error("rejected after the test passed")); }, 1);
  await new Promise((r) => setTimeout(r, 20));
});
it.skip("a skipped case", () => {});`,
        "broken.test.ts": `import { it } from "vitest";\nimport "./missing-module.ts";\nit("never runs", () => {});`,
      },
      { CI: "" },
    );
    expect(status).not.toBe(0);
    expect(totals.passed).toBe(1);
    expect(totals.unhandled).toEqual(["Error: rejected after the test passed"]);
    expect(totals.broken).toEqual(["broken.test.ts"]);
    expect(totals.failed).toBe(2);
    expect(totals.skipped).toEqual(["late.test.ts > a skipped case"]);
  });

  it("fail a NATS suite with no nats-server under any non-empty CI, and skip it outside CI", () => {
    const suite = `import { it } from "vitest";
import { describeWithNats } from ${JSON.stringify(join(repo, "test/support/nats/describeWithNats.ts"))};
describeWithNats("needs a server", () => { it("uses it", () => {}); });`;
    const inCiRun = runFixtures({ "nats.test.ts": suite }, { CI: "1", NATS_SERVER_BIN: "/nonexistent/nats-server" });
    expect(inCiRun.status).not.toBe(0);
    expect(inCiRun.totals.failed).toBe(1);
    const localRun = runFixtures({ "nats.test.ts": suite }, { CI: "", NATS_SERVER_BIN: "/nonexistent/nats-server" });
    expect(localRun.status).toBe(0);
    expect(localRun.totals.failed).toBe(0);
    expect(localRun.totals.skipped).toHaveLength(1);
  });

  it("take any non-empty CI as CI", () => {
    for (const value of ["true", "1", "yes", "woodpecker"]) expect(inCi({ CI: value })).toBe(true);
    expect(inCi({ CI: "" })).toBe(false);
    expect(inCi({})).toBe(false);
  });
});
