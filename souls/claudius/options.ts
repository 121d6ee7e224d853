import type { SoulModels } from "../../actors/soul/index.ts";
import type { PipelineConfig } from "../../runtime/cognition/index.ts";
import type { UserModels } from "../../runtime/store/index.ts";

export interface ClaudiusOptions {
  /**
   * Accepted for compatibility and not needed: user models are always kept in the soul's own
   * store through `useUserModels()` (committed with the turn), which `userModels(store, id)` reads.
   */
  userModels?: (soulId: string) => UserModels;
  /**
   * Pipeline settings (intervals, windows, limits) for every mode; frustrated and deepWork
   * still check the soul state every turn whatever is set here.
   */
  pipeline?: Partial<PipelineConfig>;
  /** `provider:model` per step. Default: none, so the cognition context's default model is used. */
  models?: SoulModels;
  /** The ISM's loop bound. Default 4. */
  maxLoops?: number;
  /**
   * What the ISM's Research action does with the problem: look it up somewhere and return the
   * findings (they enter memory as something Claudius found out). Default: no tools, so
   * Research is recall: a monologue on what Claudius already knows and would need to verify.
   */
  research?: (question: string) => Promise<string>;
  /** The persona (soul.md text); the bundled one by default. */
  persona?: string;
}

/** What every process of one blueprint shares. */
export interface ClaudiusContext {
  readonly name: string;
  readonly persona: string;
  readonly pipeline: Partial<PipelineConfig>;
  readonly userModels: ((soulId: string) => UserModels) | undefined;
  readonly maxLoops: number;
  readonly research: ((question: string) => Promise<string>) | undefined;
}
