import { externalDialog, indentNicely } from "../../runtime/cognition/index.ts";
import { useActions, useProcessManager, type MentalProcess } from "../../actors/soul/index.ts";

/** The first exchange: Samantha introduces herself, then settles into conversation. */
export const greeting: MentalProcess = async ({ workingMemory }) => {
  const { speak } = useActions();
  const [memory, stream] = await externalDialog(
    workingMemory,
    "Greet the person warmly, say who you are in a few words, and answer what they said.",
    { stream: true },
  );
  speak(stream);
  return [memory, conversation];
};

export const conversation: MentalProcess = async ({ workingMemory }) => {
  const { speak } = useActions();
  const { invocationCount } = useProcessManager();
  const [memory, stream] = await externalDialog(
    workingMemory,
    indentNicely`
      Reply to the person's last message. Stay on their topic.
      ${invocationCount > 4 ? "You know each other a little by now; be less formal." : ""}
    `,
    { stream: true },
  );
  speak(stream);
  return memory;
};
