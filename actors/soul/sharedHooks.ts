/**
 * The hooks that reach past the soul's own state: `useSharedContext` (state shared with other
 * souls and clients, runtime/bus sharedContext.ts) and `emitEphemeral` (events for whoever is
 * watching, never stored). Neither is part of the turn's LMDB commit, and both act at once:
 * a shared write is cluster state, visible to others as soon as it is made, and an ephemeral
 * event (a typing indicator) is worth something only while the turn is still running.
 *
 * So a turn that fails after a shared write has still made it, and a perception redelivered
 * after a crash runs its turn again, writes included. `update` keeps concurrent writes from
 * being lost; a write that must count once per perception should record the perception's id
 * with it (see docs/PROTOCOL.md, "Shared context").
 */
import { SharedContextPool, type JsonValue, type SharedChange, type SharedContext, type SharedContextLimits, type SharedKv, type SharedUpdateOptions } from "../../runtime/bus/index.ts";
import { requireRun, type ProcessRun } from "./ProcessRun.ts";
import { missingService } from "./SoulServices.ts";

/** What `useSharedContext` gives a process: the shared context, whose writes a cancelled turn can no longer make. */
export type SoulSharedContext = SharedContext;

/**
 * One pool of contexts per bucket for the whole host, so that every turn of every soul on a
 * node shares one watch and one view per name instead of opening a watch per call, and a
 * context nobody uses any more is closed (SharedContextPool). The first soul to use a bucket
 * sets the pool's limits (a node gives every soul the same).
 */
const pools = new WeakMap<SharedKv, SharedContextPool>();

function poolOf(kv: SharedKv, limits: Partial<SharedContextLimits> | undefined): SharedContextPool {
  let pool = pools.get(kv);
  if (!pool) pools.set(kv, (pool = new SharedContextPool(kv, limits)));
  return pool;
}

/**
 * A shared context by name (default: the soul's own, named by its id): `await ctx.ready`, then
 * read `ctx.data`, `await ctx.get(key)`, `await ctx.set(key, value)`,
 * `await ctx.update(key, (v) => next)` (compare-and-set, retried on fresh data) and
 * `ctx.watch(listener)`. Unlike Open Souls' Yjs document, values are plain JSON per key, and
 * concurrent writes are serialised by revision instead of merged.
 */
export function useSharedContext(name?: string): SoulSharedContext {
  const run = requireRun("useSharedContext");
  const { sharedContext: kv, sharedContextLimits } = run.host.services;
  if (!kv) throw missingService("useSharedContext()", "sharedContext");
  const pool = poolOf(kv, sharedContextLimits);
  const contextName = name ?? run.soulId;
  // Each use goes through the pool: it keeps the context open while it is used, and opens it
  // again if it was closed meanwhile (then `ready` waits for its view anew).
  const ctx = () => pool.context(contextName);
  const opened = ctx();
  return {
    name: opened.name,
    get ready() {
      return ctx().ready;
    },
    get data() {
      return ctx().data;
    },
    get revision() {
      return ctx().revision;
    },
    get<T extends JsonValue = JsonValue>(key: string) {
      return ctx().get<T>(key);
    },
    set(key: string, value: JsonValue) {
      run.assertLive();
      return ctx().set(key, value);
    },
    update<T extends JsonValue = JsonValue>(key: string, fn: (current: T | undefined) => T | undefined, opts?: SharedUpdateOptions) {
      run.assertLive();
      return ctx().update(key, fn, opts);
    },
    delete(key: string) {
      run.assertLive();
      return ctx().delete(key);
    },
    watch(listener: (change: SharedChange) => void) {
      const stop = pool.listen(contextName, listener);
      // A cancelled turn's listeners go with it; a finished turn's stay until the process stops them.
      run.signal.addEventListener("abort", stop, { once: true });
      return () => {
        run.signal.removeEventListener("abort", stop);
        stop();
      };
    },
  };
}

const EPHEMERAL_TYPE = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Sends an ephemeral event now, from the run that asks. */
export function emitEphemeralFrom(run: ProcessRun, hook: string, type: string, data?: unknown): void {
  run.assertLive();
  if (typeof type !== "string" || !EPHEMERAL_TYPE.test(type)) {
    throw new Error(`${hook}: the type ${JSON.stringify(type)} must be 1-64 characters of A-Z a-z 0-9 _ . : -`);
  }
  const emit = run.host.services.ephemeral;
  if (!emit) throw missingService(hook, "ephemeral");
  emit(run.soulId, type, data);
}

/**
 * An event for whoever watches the soul right now (a typing indicator, a progress note):
 * published at once on its events subject as `soul.ephemeral`, never stored, not part of the
 * turn. Data is plain msgpack of at most 64 KiB; more is refused with an error.
 */
export function emitEphemeral(type: string, data?: unknown): void {
  emitEphemeralFrom(requireRun("emitEphemeral"), "emitEphemeral()", type, data);
}
