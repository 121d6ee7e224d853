/**
 * The order vitest runs the suite's files in: those that start child processes and servers
 * (test/e2e, test/chaos: a minute or two each) before the rest, so the two workers end
 * together instead of one finishing a long file alone at the end. Within each group, vitest's
 * own order (from an earlier run's durations when it has them, else the larger file first).
 * A fresh clone (CI) has no durations: without this it would start the longest file last.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

const SLOW = /[\\/]test[\\/](e2e|chaos)[\\/]/;

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter((f) => SLOW.test(f.moduleId)), ...sorted.filter((f) => !SLOW.test(f.moduleId))];
  }
}
