/**
 * A soul whose one process runs the step a test registered under the perception's content,
 * and speaks what the step returns (as JSON): a way to drive hooks turn by turn.
 */
import { createSoul, defineSoul, useActions, usePerceptions, type CreateSoulOptions, type MentalProcess, type Soul } from "../../../actors/soul/index.ts";
import type { ActorStore } from "../../../runtime/store/index.ts";
import { record } from "../soul/helpers.ts";

export type Step = () => unknown | Promise<unknown>;

export function scriptedStoreSoul(steps: Map<string, Step>, store: ActorStore, extra: Partial<CreateSoulOptions> = {}) {
  const step: MentalProcess = async ({ workingMemory }) => {
    const { invokingPerception } = usePerceptions();
    const fn = steps.get(invokingPerception.content);
    if (!fn) throw new Error(`no step '${invokingPerception.content}'`);
    const out = await fn();
    useActions().speak(JSON.stringify(out ?? null));
    return workingMemory;
  };
  const blueprint = defineSoul({ name: "Keeper", persona: "keeps documents", initialProcess: step, processes: { step } });
  const soul: Soul = createSoul({ blueprint, id: store.actorId, store, ...extra });
  const log = record(soul);
  /** Runs a step in a turn; resolves with what it returned, or rejects with the turn's error. */
  const turn = async (name: string, fn: Step): Promise<unknown> => {
    steps.set(name, fn);
    const before = log.said().length;
    const errors = log.errors().length;
    await soul.perceive({ action: "said", content: name, name: "Ada" });
    await soul.idle();
    if (log.errors().length > errors) throw new Error(log.errors().at(-1));
    return JSON.parse(log.said()[before] as string);
  };
  return { soul, log, turn };
}
