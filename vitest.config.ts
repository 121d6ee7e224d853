import { defineConfig } from "vitest/config";
import SlowFirstSequencer from "./test/support/ci/slowFirstSequencer.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**"],
    // Wide: an e2e test starts several ensoul processes, seconds each on a busy two-core machine.
    testTimeout: 45_000,
    hookTimeout: 30_000,
    // LMDB environments and child processes are per-file; forks keep native handles isolated.
    pool: "forks",
    // Two files at a time even on two cores (vitest would run one): most e2e and NATS tests
    // wait on child processes and sockets, not the CPU (1,456 tests took 548 s this way).
    maxWorkers: 2,
    // The files that start processes first, so a fresh clone does not leave the longest for last.
    sequence: { sequencer: SlowFirstSequencer },
  },
});
