/**
 * The config's daimons, each on the node that hosts its soul, and their modes switched at
 * run time (`ensoul daimon <soul> <mode>`, or a `daimon` control request).
 */
import { assertDaimonMode, DaimonUnavailableError, divinationWhisperHandler, startDaimon, type DaimonHandle, type StartDaimonOptions, type WhisperRequestHandler } from "../../actors/daimon/index.ts";
import type { Bus } from "../bus/index.ts";
import type { CognitionContext } from "../cognition/index.ts";
import { resolveDaimon } from "./clusterConfig.ts";
import type { DaimonStatusEntry } from "./controlProtocol.ts";
import type { NodePlan } from "./nodePlan.ts";
import { BudgetSpentError } from "./soulBudgets.ts";

export interface NodeDaimons {
  list(): DaimonStatusEntry[];
  /** Switches the soul's daimons (or the named one); returns their entries after the switch. */
  setMode(soulId: string, mode: string, name?: string): DaimonStatusEntry[];
  stop(): Promise<void>;
  /** Answers `POST /api/whisper` with the soul's first daimon that is not off; undefined when it has none. */
  whisperFor(soulId: string): WhisperRequestHandler | undefined;
}

export interface StartDaimonsOptions {
  bus: Bus;
  /** The daimons whose soul this node hosts (builtins filled in), with their personas (inline, read from their files, or the builtin's). */
  daimons: { entry: ReturnType<typeof resolveDaimon>; persona: string; soulName: string }[];
  /** What the daimon of a soul thinks with (nodeCognition's `forDaimon`: its calls are charged to the soul). */
  cognitionOf(soulId: string): CognitionContext;
  onChange(entry: DaimonStatusEntry): void;
  onError(err: unknown, what: string): void;
  /** Whether this node runs the soul now (automatic placement); default: always. */
  runs?(soulId: string): boolean;
  inspect?: StartDaimonOptions["inspect"];
}

export function startDaimons(o: StartDaimonsOptions): NodeDaimons {
  const handles: DaimonHandle[] = o.daimons.map(({ entry, persona, soulName }) => {
    const handle = startDaimon({
      bus: o.bus,
      soulId: entry.soul,
      soulName,
      daimon: {
        name: entry.name,
        persona,
        mode: entry.mode,
        ...(entry.model !== undefined ? { model: entry.model } : {}),
        ...(entry.everyN !== undefined ? { everyN: entry.everyN } : {}),
      },
      cognition: o.cognitionOf(entry.soul),
      // A divination refused for the soul's spent budget was announced once (soulBudgets.ts); the daimon just waits.
      onError: (err, phase) => void (err instanceof BudgetSpentError || o.onError(err, `daimon ${entry.name} of ${entry.soul} (${phase})`)),
      ...(o.inspect ? { inspect: o.inspect } : {}),
      ...(o.runs ? { attends: () => (o.runs as (id: string) => boolean)(entry.soul) } : {}),
    });
    o.onChange({ soul: entry.soul, name: entry.name, mode: handle.mode });
    return handle;
  });
  const entryOf = (h: DaimonHandle): DaimonStatusEntry => ({ soul: h.soulId, name: h.name, mode: h.mode });
  return {
    list: () => handles.map(entryOf),
    setMode(soulId, mode, name) {
      const checked = assertDaimonMode(mode);
      const targets = handles.filter((h) => h.soulId === soulId && (name === undefined || h.name === name));
      if (targets.length === 0) {
        const has = handles.filter((h) => h.soulId === soulId).map((h) => h.name);
        throw new Error(
          has.length === 0 ? `soul '${soulId}' has no daimon on this node` : `soul '${soulId}' has no daimon named '${name}' (it has: ${has.join(", ")})`,
        );
      }
      for (const h of targets) {
        h.setMode(checked);
        o.onChange(entryOf(h));
      }
      return targets.map(entryOf);
    },
    async stop() {
      await Promise.all(handles.map((h) => h.stop()));
    },
    whisperFor(soulId) {
      if (!handles.some((h) => h.soulId === soulId)) return undefined;
      return (request, info) => {
        const daimon = handles.find((h) => h.soulId === soulId && h.mode !== "off");
        if (!daimon) throw new DaimonUnavailableError(`the daimons of soul '${soulId}' are off`);
        return divinationWhisperHandler({ daimonName: daimon.name, divine: daimon.divine })(request, info);
      };
    },
  };
}

/** The daimons of the config whose soul this node hosts, with their personas (inline, read from their files, or the builtin's). */
export function hostedDaimons({ config, hosted, loaded, blueprints }: NodePlan): StartDaimonsOptions["daimons"] {
  return config.daimons.flatMap((entry, i) => {
    if (!hosted.has(entry.soul)) return [];
    const resolved = resolveDaimon(entry);
    return [{ entry: resolved, persona: loaded.personas.get(i) ?? resolved.persona ?? "", soulName: blueprints.get(entry.soul)?.name ?? entry.soul }];
  });
}
