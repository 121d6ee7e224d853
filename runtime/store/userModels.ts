/**
 * Versioned user models: what a soul has come to understand about each person it talks to,
 * as markdown in the Claudius 7-section blueprint, kept per soul per user in LMDB
 * (`store.kv(soulId, "userModels")`).
 *
 * Every save is a new version with a one-sentence change note, never an overwrite, so the
 * history of how the soul's understanding shifted is kept (the reference versions the same
 * files in git). Keys are `[userId, version]` (an id that cannot be a key part is escaped:
 * userModelKeys.ts): a user's versions are contiguous and in order, the latest is one reverse
 * range read, and the list of users is a walk over the namespace.
 * `exportMarkdown` writes them out as files for people (and git) to read.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { KvNamespace } from "./KvNamespace.ts";
import type { Store } from "./Store.ts";
import { StoreError } from "./types.ts";
import { userModelKey, userModelPrefix, userOfModelKey } from "./userModelKeys.ts";

// The text shape of a user model belongs to cognition (it is what the prompt shows); the store
// keeps the versions. Re-exported so the store's callers find both in one place.
export { blankUserModel, USER_MODEL_SECTIONS } from "../cognition/index.ts";

export const USER_MODELS_NAMESPACE = "userModels";

export interface UserModelVersion {
  /** 1 for the first save, then one more per save. */
  version: number;
  markdown: string;
  /** What shifted, in a sentence (the model's `<model_change_note>`). */
  changeNote: string;
  /** Epoch milliseconds of the save. */
  ts: number;
}

/** One user's model, as seen by one soul. */
export interface UserModel {
  readonly soulId: string;
  readonly userId: string;
  /** The newest version, or undefined when the soul has no model of this user yet. Synchronous. */
  latest(): UserModelVersion | undefined;
  /** Every version, oldest first. */
  history(): UserModelVersion[];
  /** Stores a new version; resolves once committed. Saves of one user are applied in call order. */
  save(markdown: string, changeNote: string): Promise<UserModelVersion>;
}

/** All the user models of one soul. */
export interface UserModels {
  readonly soulId: string;
  forUser(userId: string): UserModel;
  /** Users with at least one version, in key order. */
  users(): string[];
  /**
   * Writes `<user>.md` (the latest version) and `<user>.history.md` (every version with its
   * change note, newest first) for each user into `dir`, creating it. Resolves with the paths.
   */
  exportMarkdown(dir: string): Promise<string[]>;
}

const USER_ID_MAX = 256;

function assertUserId(userId: string): string {
  if (typeof userId !== "string" || userId.trim() === "" || userId.length > USER_ID_MAX) {
    throw new StoreError(`invalid user id ${JSON.stringify(userId)}: must be a non-empty string of at most ${USER_ID_MAX} characters`);
  }
  return userId;
}

/**
 * A file name that cannot leave the export directory. An id that had to be changed gets a
 * short hash of the original, so `a.b` and `a_b` do not overwrite each other's file.
 */
export function userModelFileName(userId: string): string {
  const safe = userId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 120);
  if (safe === userId) return safe;
  let hash = 0x811c9dc5;
  for (let i = 0; i < userId.length; i++) hash = Math.imul(hash ^ userId.charCodeAt(i), 0x01000193) >>> 0;
  return `${safe || "_"}-${hash.toString(16).padStart(8, "0")}`;
}

class KvUserModel implements UserModel {
  readonly soulId: string;
  readonly userId: string;
  readonly #kv: KvNamespace<UserModelVersion>;
  /** Saves chain here, so two concurrent saves cannot both take the same version number. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(soulId: string, userId: string, kv: KvNamespace<UserModelVersion>) {
    this.soulId = soulId;
    this.userId = userId;
    this.#kv = kv;
  }

  latest(): UserModelVersion | undefined {
    return this.#kv.range({ prefix: userModelPrefix(this.userId), reverse: true, limit: 1 })[0]?.value;
  }

  history(): UserModelVersion[] {
    return this.#kv.range({ prefix: userModelPrefix(this.userId) }).map((e) => e.value);
  }

  save(markdown: string, changeNote: string): Promise<UserModelVersion> {
    if (typeof markdown !== "string" || markdown.trim() === "") {
      return Promise.reject(new StoreError(`user model of ${this.userId}: refusing to save an empty model`));
    }
    const run = this.#queue.then(async () => {
      const version: UserModelVersion = {
        version: (this.latest()?.version ?? 0) + 1,
        markdown: markdown.trim(),
        changeNote: changeNote.replace(/\s+/g, " ").trim(),
        ts: Date.now(),
      };
      await this.#kv.put(userModelKey(this.userId, version.version), version);
      return version;
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

class KvUserModels implements UserModels {
  readonly soulId: string;
  readonly #kv: KvNamespace<UserModelVersion>;
  readonly #users = new Map<string, KvUserModel>();

  constructor(store: Store, soulId: string) {
    this.soulId = soulId;
    this.#kv = store.kv<UserModelVersion>(soulId, USER_MODELS_NAMESPACE);
  }

  forUser(userId: string): UserModel {
    const id = assertUserId(userId);
    let model = this.#users.get(id);
    if (!model) {
      model = new KvUserModel(this.soulId, id, this.#kv);
      this.#users.set(id, model);
    }
    return model;
  }

  users(): string[] {
    const seen: string[] = [];
    for (const { key } of this.#kv.range()) {
      const user = userOfModelKey(key);
      if (user !== undefined && seen.at(-1) !== user) seen.push(user);
    }
    return seen;
  }

  async exportMarkdown(dir: string): Promise<string[]> {
    const target = resolve(dir);
    await mkdir(target, { recursive: true });
    const written: string[] = [];
    for (const userId of this.users()) {
      const versions = this.forUser(userId).history();
      const latest = versions.at(-1);
      if (!latest) continue;
      const base = userModelFileName(userId);
      const current = join(target, `${base}.md`);
      await writeFile(current, `${latest.markdown}\n`, "utf8");
      const history = join(target, `${base}.history.md`);
      await writeFile(history, renderHistory(userId, versions), "utf8");
      written.push(current, history);
    }
    return written;
  }
}

function renderHistory(userId: string, versions: readonly UserModelVersion[]): string {
  const entries = [...versions].reverse().map((v) =>
    [`## Version ${v.version} — ${new Date(v.ts).toISOString()}`, "", `Change note: ${v.changeNote || "(none)"}`, "", v.markdown].join("\n"),
  );
  return `# User model history: ${userId}\n\n${entries.join("\n\n---\n\n")}\n`;
}

/** The user models a soul keeps in this store. */
export function userModels(store: Store, soulId: string): UserModels {
  return new KvUserModels(store, soulId);
}
