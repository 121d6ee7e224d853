/**
 * Connections as one configured user, and a record of the permission violations the server
 * reports to each: nats.js turns the server's `-ERR 'Permissions Violation ...'` into a
 * PermissionViolationError on the connection's status iterator (and closes a denied
 * subscription with it, or rejects a denied request with it).
 */
import { randomBytes } from "node:crypto";
import { connect, PermissionViolationError, type NatsConnection } from "@nats-io/transport-node";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inboxPrefixFor, natsServerConfig, type NatsUserSpec } from "../../../runtime/bus/permissions/index.ts";
import { freePort, startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";

export interface Violation {
  operation: string;
  subject: string;
  queue?: string;
}

export interface UserConnection {
  readonly user: string;
  readonly nc: NatsConnection;
  readonly violations: Violation[];
  /** Resolves with the first violation (already seen or still to come) that matches, or rejects after `ms`. */
  violation(operation: "publish" | "subscription", subject: string, ms?: number): Promise<Violation>;
}

export function password(): string {
  return randomBytes(18).toString("base64url");
}

export async function connectAs(url: string, user: string, pass: string, opts: { inboxPrefix?: string } = {}): Promise<UserConnection> {
  const nc = await connect({ servers: url, user, pass, name: user, inboxPrefix: opts.inboxPrefix ?? inboxPrefixFor(user), maxReconnectAttempts: 0 });
  const violations: Violation[] = [];
  const waiters = new Set<() => void>();
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "error" && s.error instanceof PermissionViolationError) {
        const v: Violation = { operation: s.error.operation, subject: s.error.subject };
        if (s.error.queue !== undefined) v.queue = s.error.queue;
        violations.push(v);
        for (const w of waiters) w();
      }
    }
  })();
  return {
    user,
    nc,
    violations,
    violation(operation, subject, ms = 2_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = violations.find((v) => v.operation === operation && v.subject === subject);
          if (!found) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${user}: no ${operation} violation on ${subject} within ${ms} ms (saw: ${JSON.stringify(violations)})`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
  };
}

/**
 * Collects what a subscription receives, so a test can assert that nothing arrived; `next()`
 * hands out messages in order, whether they came before or after it was called.
 */
export function collect(nc: NatsConnection, subject: string, queue?: string): { received: Uint8Array[]; next(ms?: number): Promise<Uint8Array> } {
  const sub = nc.subscribe(subject, queue !== undefined ? { queue } : {});
  const received: Uint8Array[] = [];
  let handedOut = 0;
  const waiting: { wake: (() => void) | null } = { wake: null };
  void (async () => {
    for await (const m of sub) {
      received.push(m.data);
      waiting.wake?.();
    }
  })().catch(() => undefined);
  return {
    received,
    async next(ms = 2_000) {
      const deadline = Date.now() + ms;
      while (received.length <= handedOut) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`nothing arrived on ${subject} within ${ms} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiting.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        waiting.wake = null;
      }
      return received[handedOut++];
    },
  };
}

/** A denied request (JetStream API call, JetStream publish) rejects with the violation, possibly wrapped in a RequestError. */
export function isPermissionViolation(err: unknown): boolean {
  return err instanceof PermissionViolationError || (err instanceof Error && err.cause instanceof PermissionViolationError);
}

/**
 * Subscribes and reports whether the server refused it: nats.js closes a refused
 * subscription with a PermissionViolationError. An accepted one is unsubscribed again.
 */
export async function subscriptionRefused(nc: NatsConnection, subject: string, queue?: string, ms = 1_000): Promise<boolean> {
  const sub = nc.subscribe(subject, queue !== undefined ? { queue } : {});
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    sub.closed.then((r) => (r instanceof PermissionViolationError ? "refused" : "closed")),
    new Promise<"accepted">((resolve) => (timer = setTimeout(() => resolve("accepted"), ms))),
  ]);
  clearTimeout(timer);
  if (outcome === "accepted") sub.unsubscribe();
  return outcome === "refused";
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A nats-server with JetStream running the config `ensoul nats-config` writes for these users. */
export async function startPermissionedServer(cluster: string, users: readonly NatsUserSpec[]): Promise<{ server: NatsServerHandle; dispose(): Promise<void> }> {
  const storeDir = mkdtempSync(join(tmpdir(), "ensoul-permissioned-js-"));
  const port = await freePort();
  const server = await startNatsServer({ jetstream: false, config: natsServerConfig({ cluster, users: [...users], jetstream: { storeDir }, port }), port });
  return {
    server,
    async dispose() {
      await server.dispose();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
