/**
 * What the commands that talk to a running cluster share: connect to its NATS, do one thing,
 * drain; connection and lookup failures become one clear line.
 */
import type { Writable } from "node:stream";
import type { Bus } from "../bus/index.ts";
import { ClusterClientError } from "../node/index.ts";
import { connectClusterBus, NatsUnreachableError, type NatsConnectOptions } from "../node/index.ts";
import { CliError } from "./CliError.ts";

export interface ClusterTarget {
  nats: NatsConnectOptions;
  cluster: string;
  out?: Writable;
}

export async function withBus<T>(target: ClusterTarget, what: string, fn: (bus: Bus) => Promise<T>): Promise<T> {
  let bus: Bus;
  try {
    bus = await connectClusterBus({ ...target.nats, cluster: target.cluster, name: `ensoul-${what}-${target.cluster}` });
  } catch (err) {
    if (err instanceof NatsUnreachableError) throw new CliError(err.message, 1);
    throw err;
  }
  try {
    return await fn(bus);
  } catch (err) {
    if (err instanceof ClusterClientError) throw new CliError(err.message, 1);
    throw err;
  } finally {
    await bus.drain().catch(() => bus.close());
  }
}

export const print = (target: { out?: Writable }, line: string) => (target.out ?? process.stdout).write(`${line}\n`);

function ago(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

