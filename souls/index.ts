import type { DaimonConfig } from "../actors/daimon/index.ts";
import type { SoulBlueprint } from "../actors/soul/index.ts";
import { claudius } from "./claudius/index.ts";
import { kothar } from "./kothar/index.ts";
import { samantha } from "./samantha/index.ts";

/** The souls that ship with ensoul, by the id the CLI and cluster configs use. */
export const builtinSouls: Readonly<Record<string, SoulBlueprint>> = {
  samantha,
  claudius,
};

/** The daimons that ship with ensoul, by name: definitions for `startDaimon`. */
export const builtinDaimons: Readonly<Record<string, DaimonConfig>> = {
  kothar,
};

export const defaultSoulId = "samantha";
