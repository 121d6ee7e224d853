/**
 * A node's shutdown as named steps, each run whatever happened to the one before. A step
 * left out does harm of its own: skip stopping node control and its heartbeat timer keeps
 * the process alive forever; skip closing the store and the last writes wait on a process
 * that never exits. So a step that fails is reported and the next one runs, and only at the
 * end does the stop reject, naming every failed step, for the command to exit non-zero.
 */

export type ShutdownStep = readonly [what: string, run: () => unknown];

export class NodeStopError extends Error {
  readonly failures: readonly string[];
  constructor(nodeId: string, failures: readonly string[]) {
    super(`node ${nodeId} stopped, but ${failures.length === 1 ? "a step" : `${failures.length} steps`} failed: ${failures.join("; ")}`);
    this.name = "NodeStopError";
    this.failures = failures;
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Runs every step in order; rejects with a NodeStopError once all have run if any failed. */
export async function runShutdown(nodeId: string, report: (err: unknown, what: string) => void, steps: readonly ShutdownStep[]): Promise<void> {
  const failures: string[] = [];
  for (const [what, run] of steps) {
    try {
      await run();
    } catch (err) {
      report(err, what);
      failures.push(`${what}: ${messageOf(err)}`);
    }
  }
  if (failures.length) throw new NodeStopError(nodeId, failures);
}

/**
 * Stops every item (the souls, the hearings, the skill gates), each whatever the others do,
 * and throws one error naming those that failed once all have settled.
 */
export async function stopEach<T>(items: Iterable<T>, stop: (item: T) => unknown, name: (item: T) => string): Promise<void> {
  const list = [...items];
  const results = await Promise.allSettled(list.map(async (item) => stop(item)));
  const failed = results.flatMap((r, i) => (r.status === "rejected" ? [`${name(list[i] as T)}: ${messageOf(r.reason)}`] : []));
  if (failed.length) throw new Error(failed.join("; "));
}
