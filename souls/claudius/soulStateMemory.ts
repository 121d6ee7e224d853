/**
 * Claudius's soul state in soul memory: one soul-memory key per key of the pipeline's
 * `SOUL_STATE_DEFAULTS` (`emotionalState`, `currentTopic`, `currentProject`, `currentTask`,
 * `conversationSummary`, `currentProcess`), as the reference keeps them in `soul_memory`.
 * Only those keys are ever written: the pipeline has already refused any other key a
 * `<soul_state_update>` named (applySoulStateUpdate), and this file writes nothing else.
 *
 * Read through `useSoulMemory`, so a key is written back only when the turn changed it; a
 * key the soul does not have yet gets its default stored with the first turn.
 */
import { useSoulMemory, type Ref } from "../../actors/soul/index.ts";
import { SOUL_STATE_DEFAULTS, SOUL_STATE_KEYS, soulStateOf, type SoulState, type SoulStateKey } from "../../runtime/cognition/index.ts";

export interface SoulStateRefs {
  /** The state as the turn found it (defaults for missing or malformed keys). */
  readonly state: SoulState;
  /** Writes the keys whose values differ from what the turn found. */
  save(next: Partial<SoulState>): void;
}

/** Call inside a process or ISM handler: it uses hooks. */
export function useSoulState(): SoulStateRefs {
  const refs = new Map<SoulStateKey, Ref<unknown>>();
  const raw: Record<string, unknown> = {};
  for (const key of SOUL_STATE_KEYS) {
    const ref = useSoulMemory<unknown>(key, SOUL_STATE_DEFAULTS[key]);
    refs.set(key, ref);
    raw[key] = ref.current;
  }
  // soulStateOf keeps only strings and a valid emotionalState: whatever else is stored reads as the default.
  const state = soulStateOf(raw);
  return {
    state,
    save(next) {
      for (const key of SOUL_STATE_KEYS) {
        const value = next[key];
        if (value === undefined || value === state[key]) continue;
        const ref = refs.get(key) as Ref<unknown>;
        ref.current = value;
      }
    },
  };
}
