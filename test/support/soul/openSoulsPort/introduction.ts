import { type MentalProcess, useActions } from "../../../../actors/soul/index.ts";
import { externalDialog } from "../../../../runtime/cognition/index.ts";
import conversationProcess from "./conversationProcess.ts";

const introduction: MentalProcess = async ({ workingMemory }) => {
  const { speak } = useActions();

  const [withDialog, stream] = await externalDialog(
    workingMemory,
    "Greet the user warmly, say who you are, and ask what they need.",
    { stream: true }
  );
  speak(stream);

  return [withDialog, conversationProcess];
};

export default introduction;
