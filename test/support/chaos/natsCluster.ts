/**
 * A real NATS cluster for tests: three (or n) `nats-server`s on loopback, joined by cluster
 * routes, each with JetStream and its own store directory, so streams can be replicated (R3).
 * Every server keeps its client port, its route port, its name and its store across restarts,
 * as a JetStream cluster needs. Built on startNatsServer (test/support/nats/natsServer.ts);
 * nats-server 2.9 (Debian's) is enough. Nothing here talks to anything but 127.0.0.1.
 */
import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { freePort, startNatsServer, type NatsServerHandle } from "../nats/natsServer.ts";

export interface NatsClusterHandle {
  readonly servers: NatsServerHandle[];
  /** Every server's client URL. */
  readonly urls: string[];
  /** The server named so (JetStream reports leaders by name). */
  byName(name: string): NatsServerHandle | undefined;
  /** Resolves once JetStream answers through any server (the cluster has a meta leader); returns how long it took. */
  jetStreamReady(timeoutMs?: number): Promise<number>;
  /** Every server stopped (SIGTERM, or SIGKILL with `kill`), then all started again; resolves when JetStream answers. */
  restartAll(opts?: { kill?: boolean }): Promise<void>;
  dispose(): Promise<void>;
}

export async function startNatsCluster(opts: { size?: number } = {}): Promise<NatsClusterHandle> {
  const size = opts.size ?? 3;
  const tag = `${process.pid}-${randomBytes(3).toString("hex")}`;
  const ports: number[] = [];
  // Distinct ports: freePort may hand back one just released.
  while (ports.length < size * 2) {
    const p = await freePort();
    if (!ports.includes(p)) ports.push(p);
  }
  const clientPorts = ports.slice(0, size);
  const routePorts = ports.slice(size);
  const routes = routePorts.map((p) => `"nats-route://127.0.0.1:${p}"`).join(", ");
  const servers: NatsServerHandle[] = [];
  try {
    // Started together: the first cannot elect a JetStream leader until the others are up.
    servers.push(
      ...(await Promise.all(
        clientPorts.map((port, i) =>
          startNatsServer({
            jetstream: true,
            port,
            name: `chaos-${tag}-n${i + 1}`,
            config: [`cluster {`, `  name: "ensoul-chaos-${tag}"`, `  listen: "127.0.0.1:${routePorts[i]}"`, `  routes: [${routes}]`, `}`, ``].join("\n"),
          }),
        ),
      )),
    );
  } catch (err) {
    await Promise.all(servers.map((s) => s.dispose()));
    throw err;
  }
  const urls = servers.map((s) => s.url);

  const jetStreamReady = async (timeoutMs = 60_000): Promise<number> => {
    const start = Date.now();
    let last: unknown;
    while (Date.now() - start < timeoutMs) {
      try {
        const nc = await connect({ servers: urls, timeout: 2_000, maxReconnectAttempts: 0 });
        try {
          const jsm = await jetstreamManager(nc, { timeout: 2_000 });
          await jsm.getAccountInfo();
          return Date.now() - start;
        } finally {
          await nc.close();
        }
      } catch (err) {
        last = err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    throw new Error(`the NATS cluster's JetStream did not answer within ${timeoutMs} ms: ${String(last)}`);
  };

  await jetStreamReady();
  return {
    servers,
    urls,
    byName: (name) => servers.find((s) => s.name === name),
    jetStreamReady,
    async restartAll({ kill = false } = {}) {
      await Promise.all(servers.map((s) => (kill ? s.kill() : s.stop())));
      await Promise.all(servers.map((s) => s.restart()));
      await jetStreamReady();
    },
    async dispose() {
      await Promise.all(servers.map((s) => s.dispose()));
    },
  };
}
