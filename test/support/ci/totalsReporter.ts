/**
 * The vitest reporter `.ci/run` reads its totals from. The JSON reporter leaves out what
 * can hide a failure: unhandled errors (an assertion-free rejection after a test passed)
 * and the tests that were skipped. This one counts an unhandled error, a test file that
 * failed to load, and a test that never finished as failures, and lists every skipped
 * test by name, so a green line cannot stand on tests that did not run.
 *
 * It writes `{ passed, failed, skipped: [names], unhandled: [messages], broken: [files] }`
 * as JSON to the file named by ENSOUL_TOTALS_FILE.
 */
import { writeFileSync } from "node:fs";
import type { Reporter, TestModule } from "vitest/node";

export interface RunTotals {
  passed: number;
  failed: number;
  skipped: string[];
  unhandled: string[];
  broken: string[];
}

type SerializedError = Parameters<NonNullable<Reporter["onTestRunEnd"]>>[1][number];

/** Totals of a finished run: the rules above, kept apart from vitest so they can be tested. */
export function countRun(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): RunTotals {
  const totals: RunTotals = { passed: 0, failed: 0, skipped: [], unhandled: [], broken: [] };
  for (const module of modules) {
    let testsFailed = 0;
    for (const test of module.children.allTests()) {
      const { state } = test.result();
      if (state === "passed") totals.passed++;
      else if (state === "skipped") totals.skipped.push(`${module.relativeModuleId} > ${test.fullName}`);
      else {
        // "failed", or "pending": a test that never finished did not pass.
        totals.failed++;
        testsFailed++;
      }
    }
    const loadErrors = module.errors().length;
    if (loadErrors > 0 || (module.state() === "failed" && testsFailed === 0)) {
      totals.failed++;
      totals.broken.push(module.relativeModuleId);
    }
  }
  for (const error of unhandledErrors) {
    totals.failed++;
    totals.unhandled.push(`${error.name ?? "Error"}: ${error.message ?? String(error)}`.split("\n")[0]!);
  }
  return totals;
}

export default class TotalsReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const file = process.env.ENSOUL_TOTALS_FILE;
    if (!file) return;
    writeFileSync(file, JSON.stringify(countRun(modules, unhandledErrors)));
  }
}
