/**
 * The pipeline's settings, with the reference's defaults (cognitive-pipeline.md,
 * "Configuration"). Every interval counts interactions, 1-based: interaction N is the Nth
 * turn of the thread.
 */

export interface PipelineConfig {
  /** `soul_state_check`/`update` are asked for on interactions N, 2N, 3N... Default 3. 0 turns them off. */
  soulStateInterval: number;
  /**
   * The user-model UPDATE interval (the reference's `USER_MODEL_UPDATE_INTERVAL`, default 5):
   * after a saved rewrite, `user_model_update` is not asked for again until this many
   * interactions have passed. The `user_model_check` itself is asked on every turn of a
   * process that lists it (see gating.ts for why). 0 means no cooldown.
   */
  userModelInterval: number;
  /** How many recent memories the gates read (the reference's working-memory window). Default 20. */
  memoryWindow: number;
  /**
   * How many recent conversation memories (user messages, monologues, dialogue) go into the
   * prompt as the thread so far, as a resumed session's transcript would. Default 8 (about
   * three turns): enough to follow the thread; a soul that needs more keeps a summary
   * (`conversationSummary`) rather than a longer window, which every turn would pay for.
   */
  historyWindow: number;
  /** The spoken answer is cut to this length (the reference's Slack-safe limit). Default 3000. */
  maxDialogueChars: number;
}

export const DEFAULT_PIPELINE_CONFIG: Readonly<PipelineConfig> = Object.freeze({
  soulStateInterval: 3,
  userModelInterval: 5,
  memoryWindow: 20,
  historyWindow: 8,
  maxDialogueChars: 3000,
});

export function pipelineConfig(overrides: Partial<PipelineConfig> = {}): PipelineConfig {
  const config = { ...DEFAULT_PIPELINE_CONFIG, ...overrides };
  for (const [key, value] of Object.entries(config)) {
    if (!Number.isInteger(value) || value < 0) {
      throw new RangeError(`pipeline config ${key} must be a non-negative integer, got ${String(value)}`);
    }
  }
  if (config.maxDialogueChars === 0) throw new RangeError("pipeline config maxDialogueChars must be at least 1");
  return config;
}

/** True on interactions N, 2N, 3N...; never when the interval is 0. */
export function isDue(interaction: number, interval: number): boolean {
  return interval > 0 && interaction > 0 && interaction % interval === 0;
}
