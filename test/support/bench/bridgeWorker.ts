/**
 * Runs test/support/cluster/benchBridge.ts (a bridge publishing perceptions and counting the
 * souls' final speech) in a worker thread: its own event loop, as a bridge process would
 * have, so the node measured does not share it (cluster.bench.ts, failover.bench.ts).
 */
import { Worker } from "node:worker_threads";
import type { BridgeJob } from "../cluster/benchBridge.ts";

export type { BridgeJob };

export function inBridge<T>(job: BridgeJob): Promise<T> {
  return new Promise((resolve, reject) => {
    // Node 20 cannot start a worker from a .ts file, even with tsx loaded: register tsx in the worker first.
    const entry = new URL("../cluster/benchBridge.ts", import.meta.url).href;
    const tsx = import.meta.resolve("tsx/esm/api");
    const bootstrap = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
    const worker = new Worker(bootstrap, { eval: true, workerData: job });
    worker.once("message", (result: T & { error?: string }) => {
      void worker.terminate();
      if (result.error) reject(new Error(`bench bridge: ${result.error}`));
      else resolve(result);
    });
    worker.once("error", reject);
  });
}
