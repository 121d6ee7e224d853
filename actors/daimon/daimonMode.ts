/**
 * How a daimon makes itself heard. The mode is per soul and can change while the daimon
 * runs, because a person listening to a conversation may want the daimon silent (off), as
 * the soul's inner voice (whisper), as a voice in the room (speak), or both at once.
 */
export const DAIMON_MODES = ["whisper", "speak", "both", "off"] as const;

export type DaimonMode = (typeof DAIMON_MODES)[number];

export function isDaimonMode(value: unknown): value is DaimonMode {
  return typeof value === "string" && (DAIMON_MODES as readonly string[]).includes(value);
}

/** Checks a mode that came from outside (a config file, a CLI flag, an HTTP call). */
export function assertDaimonMode(value: unknown): DaimonMode {
  if (isDaimonMode(value)) return value;
  const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 32)) : typeof value;
  throw new TypeError(`daimon mode must be one of ${DAIMON_MODES.join(", ")}; got ${shown}`);
}

/** The soul hears the intuition as its own recall. */
export const whispersIn = (mode: DaimonMode): boolean => mode === "whisper" || mode === "both";

/** The daimon says it aloud, under its own name, in the soul's conversation. */
export const speaksIn = (mode: DaimonMode): boolean => mode === "speak" || mode === "both";
