/**
 * `ensoul/store`: the LMDB store (`openStore`, per-actor keyspaces, inbox, outbox,
 * schedules, user models), for reading or hosting souls' memory directly. The folder's
 * index.ts is its public surface (DESIGN.md).
 */
export * from "../runtime/store/index.ts";
