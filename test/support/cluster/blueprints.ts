/**
 * Small souls for the cluster tests and benchmarks: no model calls, so what they say is
 * exactly predictable and a turn costs only the runtime.
 */
import { DAIMONIC_WHISPER_KEY, readDaimonicWhisper, type DaimonicWhisper } from "../../../actors/daimon/index.ts";
import { defineSoul, useActions, usePerceptions, useSoulMemory, type MentalProcess } from "../../../actors/soul/index.ts";

/** Speaks back what it perceived, `echo: <content>`; `act <name>` makes it dispatch an action instead. */
const echo: MentalProcess = async ({ workingMemory }) => {
  const { content } = usePerceptions().invokingPerception;
  const actions = useActions();
  if (content.startsWith("act ")) actions.dispatch({ action: content.slice(4).trim(), content: "please" });
  else actions.speak(`echo: ${content}`);
  return workingMemory;
};

export const echoSoul = defineSoul({ name: "Echo", persona: "A soul that says back what it hears.", initialProcess: echo, processes: { echo } });

/**
 * Does with a whisper what a pipeline does: uses it in this turn (here: says it), then
 * consumes it; the consumption lands only when the turn commits.
 */
const mindful: MentalProcess = async ({ workingMemory }) => {
  const pending = useSoulMemory<DaimonicWhisper | null>(DAIMONIC_WHISPER_KEY, null);
  const whisper = readDaimonicWhisper({ [DAIMONIC_WHISPER_KEY]: pending.current });
  const { content } = usePerceptions().invokingPerception;
  useActions().speak(whisper ? `echo: ${content} (intuition: ${whisper.content})` : `echo: ${content}`);
  if (whisper) pending.current = null;
  return workingMemory;
};

export const mindfulSoul = defineSoul({ name: "Mindful", persona: "A soul that heeds its intuitions once.", initialProcess: mindful, processes: { mindful } });
