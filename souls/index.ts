import type { SoulBlueprint } from "../actors/soul/index.ts";
import { samantha } from "./samantha/index.ts";

/** The souls that ship with ensoul, by the id the CLI and cluster configs use. */
export const builtinSouls: Readonly<Record<string, SoulBlueprint>> = {
  samantha,
};

export const defaultSoulId = "samantha";
