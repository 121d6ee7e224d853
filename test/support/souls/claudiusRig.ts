/**
 * A Claudius soul on LMDB in a temp dir, talking to a model through whatever cognition context
 * the test gives it, with everything it says and reports collected turn by turn. `restart`
 * stops the soul, closes the store, reopens it from disk and starts a new soul with the same
 * id, as a process restart would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSoul, type Proposal, type Soul, type SoulBlueprint, type SoulEvent } from "../../../actors/soul/index.ts";
import type { CognitionContext } from "../../../runtime/cognition/index.ts";
import { openStore, type Store } from "../../../runtime/store/index.ts";

export interface TurnReport {
  /** What the soul said this turn, in order. */
  spoken: string[];
  /** The process the soul is in after the turn. */
  process: string;
  /** Model requests the turn made (when the rig was given a request counter). */
  requests: number;
  /**
   * Transitions taken during the turn, as `from->to` (`from=>to` for executeNow). The runtime
   * also reports where a chained turn ended as a self-transition (`deepWork->deepWork`); those
   * are left out.
   */
  transitions: string[];
  errors: string[];
}

export interface ClaudiusRig {
  readonly id: string;
  readonly dir: string;
  store(): Store;
  soul(): Soul;
  readonly speech: Proposal[];
  readonly events: SoulEvent[];
  say(content: string, name?: string, meta?: Record<string, unknown>): Promise<TurnReport>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface ClaudiusRigOptions {
  /** The blueprint, made for the store that is open now (restart makes it again). */
  blueprint: (store: Store) => SoulBlueprint;
  cognition: CognitionContext;
  id?: string;
  /** Model requests so far; `say` reports how many the turn made. */
  requestCount?: () => number;
}

export async function startClaudiusRig(options: ClaudiusRigOptions): Promise<ClaudiusRig> {
  const id = options.id ?? "claudius";
  const dir = mkdtempSync(join(tmpdir(), "ensoul-claudius-"));
  const speech: Proposal[] = [];
  const events: SoulEvent[] = [];
  let store = openStore({ path: dir, noSync: true });
  const start = (): Soul => {
    const soul = createSoul({ blueprint: options.blueprint(store), id, store, cognition: options.cognition });
    soul.onSpeech((p) => speech.push(p));
    soul.onEvent((e) => events.push(e));
    return soul;
  };
  let soul = start();
  const count = options.requestCount ?? (() => 0);

  return {
    id,
    dir,
    store: () => store,
    soul: () => soul,
    speech,
    events,
    async say(content, name = "Tom", meta) {
      const spokenBefore = speech.length;
      const eventsBefore = events.length;
      const requestsBefore = count();
      await soul.perceive({ action: "said", content, name, ...(meta ? { meta } : {}) });
      await soul.idle();
      const turnEvents = events.slice(eventsBefore);
      return {
        spoken: speech.slice(spokenBefore).filter((p) => p.kind === "speak").map((p) => p.content),
        process: soul.state().process,
        requests: count() - requestsBefore,
        transitions: turnEvents.flatMap((e) => (e.type === "transition" && e.from !== e.to ? [`${e.from}${e.executeNow ? "=>" : "->"}${e.to}`] : [])),
        errors: turnEvents.flatMap((e) => (e.type === "error" ? [e.message] : [])),
      };
    },
    async restart() {
      await soul.stop();
      await store.close();
      store = openStore({ path: dir, noSync: true });
      soul = start();
    },
    async close() {
      await soul.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
