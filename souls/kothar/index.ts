/**
 * Kothar-wa-Khasis, the craftsman god: Claudius's daimon. A daimon definition for
 * `startDaimon({ bus, soulId, soulName, daimon: kothar })`: it watches Claudius's
 * conversation and, every few exchanges, whispers a terse, oblique intuition that Claudius
 * senses as his own recall on his next turn. Switch it to `speak` (or `both`) and it says the
 * intuition aloud under its own name instead.
 *
 * Model: Groq's small, fast `llama-3.1-8b-instant` when GROQ_API_KEY is set (as the
 * reference daimon runs on Groq); otherwise no model is named, so the daimon divines with the
 * cognition context's default, which is the offline model when no key is set at all.
 */
import { readFileSync } from "node:fs";
import type { DaimonConfig, DaimonMode } from "../../actors/daimon/index.ts";

export const kotharPersona = readFileSync(new URL("./soul.md", import.meta.url), "utf8");

export const KOTHAR_GROQ_MODEL = "groq:llama-3.1-8b-instant";
/** Kothar speaks up every third exchange: often enough to matter, rarely enough to be heeded. */
export const KOTHAR_EVERY_N = 3;

export interface KotharOptions {
  /** Where GROQ_API_KEY is read. Default: process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  mode?: DaimonMode;
  everyN?: number;
  /** A `provider:model` that wins over the environment's choice. */
  model?: string;
}

/** Kothar's definition, for this environment. */
export function kotharDaimon(options: KotharOptions = {}): DaimonConfig {
  const env = options.env ?? process.env;
  const groq = typeof env["GROQ_API_KEY"] === "string" && env["GROQ_API_KEY"].trim() !== "";
  const model = options.model ?? (groq ? KOTHAR_GROQ_MODEL : undefined);
  return {
    name: "Kothar",
    persona: kotharPersona,
    ...(model !== undefined ? { model } : {}),
    mode: options.mode ?? "whisper",
    everyN: options.everyN ?? KOTHAR_EVERY_N,
  };
}

/** Kothar as registered in `builtinDaimons`, for the environment this process started in. */
export const kothar: DaimonConfig = kotharDaimon();
