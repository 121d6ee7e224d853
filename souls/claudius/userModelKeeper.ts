/**
 * Where Claudius keeps what it understands about each person: the soul's versioned user
 * models (`useUserModels()`), one version per rewrite with its change note, in the soul's
 * own store under the `userModels` namespace. A save is buffered in the turn and committed
 * in the turn's transaction, so a turn that fails saves nothing, and
 * `userModels(store, soulId)` (runtime/store) reads what was saved.
 */
import { useUserModels } from "../../actors/soul/index.ts";
import type { UserModelVersion } from "../../runtime/store/index.ts";

export interface UserModelKeeper {
  latest(userId: string): UserModelVersion | undefined;
  save(userId: string, markdown: string, changeNote: string): Promise<UserModelVersion>;
}

/** The soul's user models, through the turn. Call inside a process: it uses hooks. */
export function turnKeeper(): UserModelKeeper {
  const models = useUserModels();
  return {
    latest: (userId) => models.latest(userId),
    save: (userId, markdown, changeNote) => {
      try {
        return Promise.resolve(models.save(userId, markdown, changeNote));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}
