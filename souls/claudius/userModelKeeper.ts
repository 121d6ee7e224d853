/**
 * Where Claudius keeps what it understands about each person: the versioned user-model store
 * (`userModels(store, soulId).forUser(userId)`, one version per rewrite with its change note),
 * or, when the soul was built without one, soul memory.
 *
 * A mental process cannot reach its soul's store (hooks expose soul memory, not the store),
 * so the store comes in through `createClaudius({ userModels })`: the host that opens the
 * store and creates the soul passes `(soulId) => userModels(store, soulId)`. The registered
 * `claudius` has no store to hand; it keeps the same versions, notes included, in soul memory
 * `userModels` (the last USER_MODEL_VERSIONS_KEPT per person), which is committed with the
 * turn and so survives restarts as well.
 */
import { useSoulMemory } from "../../actors/soul/index.ts";
import type { UserModels, UserModelVersion } from "../../runtime/store/index.ts";

/** Soul-memory fallback: versions kept per person. */
export const USER_MODEL_VERSIONS_KEPT = 10;
export const USER_MODELS_KEY = "userModels";

export interface UserModelKeeper {
  latest(userId: string): UserModelVersion | undefined;
  save(userId: string, markdown: string, changeNote: string): Promise<UserModelVersion>;
}

/** The store's versions for this soul. */
export function storeKeeper(models: UserModels): UserModelKeeper {
  return {
    latest: (userId) => models.forUser(userId).latest(),
    save: (userId, markdown, changeNote) => models.forUser(userId).save(markdown, changeNote),
  };
}

type Kept = Record<string, UserModelVersion[]>;

/** Versions in soul memory. Call inside a process: it uses hooks. */
export function soulMemoryKeeper(): UserModelKeeper {
  const ref = useSoulMemory<Kept>(USER_MODELS_KEY, {});
  const versionsOf = (userId: string): UserModelVersion[] => {
    const kept = ref.current;
    const list = kept !== null && typeof kept === "object" ? kept[userId] : undefined;
    return Array.isArray(list) ? list : [];
  };
  return {
    latest: (userId) => versionsOf(userId).at(-1),
    save(userId, markdown, changeNote) {
      const versions = versionsOf(userId);
      const version: UserModelVersion = {
        version: (versions.at(-1)?.version ?? 0) + 1,
        markdown: markdown.trim(),
        changeNote: changeNote.replace(/\s+/g, " ").trim(),
        ts: Date.now(),
      };
      const kept = ref.current !== null && typeof ref.current === "object" ? ref.current : {};
      ref.current = { ...kept, [userId]: [...versions, version].slice(-USER_MODEL_VERSIONS_KEPT) };
      return Promise.resolve(version);
    },
  };
}
