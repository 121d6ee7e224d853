/**
 * One scenario, run over the in-process bus and over a real nats-server: a real soul (LMDB
 * in a temp dir) in a conversation, a daimon watching it on the bus, a whisper stored in
 * soul memory, injected as recall into exactly one successful turn, then consumed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DAIMONIC_REGION,
  DAIMONIC_WHISPER_KEY,
  readDaimonicWhisper,
  startDaimon,
  withDaimonicIntuition,
  withoutDaimonicIntuition,
  type DaimonHandle,
  type DaimonicWhisper,
} from "../../../actors/daimon/index.ts";
import { createSoul, defineSoul, useActions, usePerceptions, useSoulMemory, type MentalProcess, type Soul } from "../../../actors/soul/index.ts";
import { externalDialog } from "../../../runtime/cognition/index.ts";
import { clusterSubjects, type Bus } from "../../../runtime/bus/index.ts";
import { openStore, type Store } from "../../../runtime/store/index.ts";
import type { CompletionRequest } from "../../../runtime/providers/index.ts";
import { cognitionWith, countingModel, sayToSoul, until } from "../../unit/daimon/daimonTestKit.ts";
import { soulOnBus, type SoulOnBus } from "../../support/souls/soulOnBus.ts";

export const KOTHAR_PERSONA = "You are Kothar wa Khasis, craftsman of the gods, watching Ann's conversations: sardonic, perceptive, brief.";

/**
 * Ann's one process. It does what a pipeline does with a whisper: reads it from soul memory,
 * recalls it (assistant role, daimonicIntuition region) for this turn's step only, and
 * consumes it; the consumption lands only if the turn commits, so a failed turn keeps it.
 */
const talk: MentalProcess = async ({ workingMemory }) => {
  const pending = useSoulMemory<DaimonicWhisper | null>(DAIMONIC_WHISPER_KEY, null);
  const whisper = readDaimonicWhisper({ [DAIMONIC_WHISPER_KEY]: pending.current });
  const recalled = whisper ? withDaimonicIntuition(workingMemory, whisper) : workingMemory;
  if (usePerceptions().invokingPerception.content === "fail") throw new Error("this turn fails on purpose");
  const [memory, said] = await externalDialog(recalled, "Answer briefly.");
  useActions().speak(said);
  if (whisper) pending.current = null;
  return withoutDaimonicIntuition(memory);
};

export const annBlueprint = defineSoul({ name: "Ann", persona: "You are Ann, a careful friend.", initialProcess: talk, processes: { talk } });

export interface Scenario {
  soul: Soul;
  daimon: DaimonHandle;
  wiring: SoulOnBus;
  store: Store;
  /** What the soul's model was asked, turn by turn. */
  soulCalls: CompletionRequest[];
  daimonCalls: CompletionRequest[];
  say(content: string): Promise<void>;
  /** The committed soul memory, read back from LMDB. */
  storedSoulMemory(): Record<string, unknown> | undefined;
  close(): Promise<void>;
}

/**
 * `soulBus` hosts the soul, `daimonBus` the daimon: over NATS they are two connections, as
 * they would be two processes.
 */
export async function startScenario(soulBus: Bus, daimonBus: Bus): Promise<Scenario> {
  const dir = mkdtempSync(join(tmpdir(), "ensoul-daimon-"));
  const store = openStore({ path: dir, noSync: true });
  const soulModel = countingModel('Ann said: "I hear you."');
  const daimonModel = countingModel('Kothar whispers: "They <b>need</b> assurance, not answers."');
  const soul = createSoul({ blueprint: annBlueprint, id: "ann", store: store.actor("ann"), cognition: cognitionWith(soulModel.model) });
  const wiring = soulOnBus(soulBus, soul);
  const daimon = startDaimon({
    bus: daimonBus,
    soulId: "ann",
    soulName: "Ann",
    daimon: { name: "Kothar", persona: KOTHAR_PERSONA, mode: "whisper", everyN: 1 },
    cognition: cognitionWith(daimonModel.model),
  });
  const subjects = clusterSubjects(soulBus.cluster);
  let turns = 0;
  soul.onEvent((event) => {
    if (event.type === "turn" || (event.type === "error" && event.phase === "process")) turns++;
  });
  return {
    soul,
    daimon,
    wiring,
    store,
    soulCalls: soulModel.calls,
    daimonCalls: daimonModel.calls,
    async say(content) {
      const before = turns;
      await sayToSoul(daimonBus, subjects, "ann", "Bob", content);
      await until(() => turns > before, 10_000, `Ann's turn for "${content}"`);
      await soul.idle();
    },
    storedSoulMemory: () => store.actor("ann").loadState()?.soulMemory,
    async close() {
      await daimon.stop();
      wiring.close();
      await soul.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The recalled intuition in one model request, if any. */
export function recalledIntuition(request: CompletionRequest | undefined): string | undefined {
  return request?.messages.find((m) => m.role === "assistant" && m.content.startsWith("## Daimonic Intuition"))?.content;
}

export { DAIMONIC_REGION };
