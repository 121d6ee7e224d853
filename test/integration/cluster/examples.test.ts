/** Every example config in examples/ loads: what the README points people at must work as written. */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadClusterConfig } from "../../../runtime/node/index.ts";
import { repoRoot } from "../../support/cluster/cliProcess.ts";

const examples = readdirSync(join(repoRoot, "examples")).filter((f) => /\.(ya?ml|json)$/.test(f));

describe("examples/", () => {
  it("has example configs", () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
  });
  for (const file of examples) {
    it(`${file} loads and names its souls`, async () => {
      const loaded = await loadClusterConfig(join(repoRoot, "examples", file));
      expect(loaded.config.souls.length).toBeGreaterThan(0);
      for (const soul of loaded.config.souls) expect(soul.id).toMatch(/^[A-Za-z0-9_-]+$/);
    });
  }
});
