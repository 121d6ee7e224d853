import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // LMDB environments and child processes are per-file; forks keep native handles isolated.
    pool: "forks",
  },
});
