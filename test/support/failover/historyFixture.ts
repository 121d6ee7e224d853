/**
 * What the failover tests on a real nats-server share: one JetStream server for the describe
 * block, client buses (each a node's connection: its history log and leases) and LMDB stores
 * without fsync, all closed at the end. Call it inside a describeWithNats block.
 */
import { afterAll, beforeAll } from "vitest";
import { connectNatsBus, type Bus } from "../../../runtime/bus/index.ts";
import { openStore, type ActorState, type Store } from "../../../runtime/store/index.ts";
import { sampleState } from "../store/fixtures.ts";
import { startNatsServer, type NatsServerHandle } from "../nats/natsServer.ts";
import { tempDirs } from "../tempDirs.ts";

export function historyFixture(prefix: string) {
  const dirs = tempDirs(prefix);
  let server: NatsServerHandle | undefined;
  const buses: Bus[] = [];
  const stores: Store[] = [];
  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
  });
  afterAll(async () => {
    await Promise.allSettled(stores.map((s) => s.close()));
    await Promise.allSettled(buses.map((b) => b.close()));
    await server?.dispose();
    dirs.cleanup();
  });
  const running = (): NatsServerHandle => {
    if (!server) throw new Error("nats-server is not running: historyFixture() belongs inside a describeWithNats block");
    return server;
  };
  return {
    dirs,
    get server(): NatsServerHandle {
      return running();
    },
    /** A connection to the cluster, closed at the end. */
    async bus(cluster: string): Promise<Bus> {
      const b = await connectNatsBus({ servers: running().url, cluster });
      buses.push(b);
      return b;
    },
    /** An LMDB store in a fresh directory, closed at the end. */
    store(): Store {
      const s = openStore({ path: dirs.make(), noSync: true });
      stores.push(s);
      return s;
    },
  };
}

/** About 2.4 MB of working memory: a turn's record (or a snapshot) of it is over the server's 1 MiB max_payload. */
export function largeState(turn: number): ActorState {
  const state = sampleState(turn);
  const memories = (state.workingMemory as { memories: Record<string, unknown>[] }).memories;
  for (let i = 0; i < 40; i++) memories.push({ role: "user", content: `${i} ${"long story ".repeat(5_500)}`, _id: `big-${turn}-${i}`, _timestamp: 1 });
  return state;
}

/** Resolves once `check` holds, looking every 50 ms; rejects after `ms`. */
export async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
