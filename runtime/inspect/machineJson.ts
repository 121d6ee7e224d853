/**
 * The machines of a daimon and a bridge as `createMachine` JSON (`ensoul export`), beside a
 * soul's (actors/soul/soulMachineJson.ts): what Stately's tools draw and simulate.
 */
import type { DaimonConfig } from "../../actors/daimon/index.ts";
import { daimonMachine, DEFAULT_EVERY_N } from "../../actors/daimon/index.ts";
import { bridgeMachine } from "../../bridges/core/index.ts";
import { machineModelJson, type JsonObject, type MachineJson } from "../../actors/vocabulary/index.ts";

// The soul's own is with the soul: a node serves it to the debugger.
export { ISM_STATE, processEvent, soulMachineJson } from "../../actors/soul/index.ts";

/** The daimon machine; with a daimon's definition, named after it and with its settings in `meta`. */
export function daimonMachineJson(daimon?: DaimonConfig): MachineJson {
  const ensoul: JsonObject = { kind: "daimon" };
  if (daimon) {
    ensoul["name"] = daimon.name;
    ensoul["mode"] = daimon.mode;
    ensoul["everyN"] = daimon.everyN ?? DEFAULT_EVERY_N;
  }
  const description = "A daimon: it watches a soul's conversation, divines an intuition every few exchanges, and makes it heard by its mode.";
  return machineModelJson(daimonMachine, daimon?.name ?? "daimon", description, ensoul);
}

/** The bridge machine: a bridge's connection to its platform. */
export function bridgeMachineJson(): MachineJson {
  const description = "A bridge: its connection to the platform, as the platform's SDK reports it.";
  return machineModelJson(bridgeMachine, "bridge", description, { kind: "bridge" });
}
