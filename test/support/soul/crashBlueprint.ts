import { defineSoul, useActions, usePerceptions, useSoulMemory, type MentalProcess, type SoulBlueprint } from "../../../actors/soul/index.ts";

/**
 * The soul the crash test runs in a child process and then restores in the test: every turn
 * counts itself in soul memory and speaks; on `hangOn` it never finishes (until restored
 * without `hangOn`).
 */
export function crashBlueprint(opts: { hangOn?: string; onHang?: () => void; onRun?: (content: string) => void } = {}): SoulBlueprint {
  const main: MentalProcess = async ({ workingMemory }) => {
    const { invokingPerception } = usePerceptions();
    opts.onRun?.(invokingPerception.content);
    const turns = useSoulMemory("turns", 0);
    turns.current += 1;
    useActions().speak(`reply ${turns.current} to ${invokingPerception.content}`);
    if (invokingPerception.content === opts.hangOn) {
      opts.onHang?.();
      await new Promise<never>(() => undefined);
    }
    return workingMemory.withMonologue(`answered ${invokingPerception.content}`);
  };
  return defineSoul({ name: "Crashy", persona: "crashes", initialProcess: main, processes: { main } });
}
