import { type MentalProcess, useActions, usePerceptions, useProcessManager } from "../../../../actors/soul/index.ts";
import { ChatMessageRoleEnum, externalDialog, indentNicely } from "../../../../runtime/cognition/index.ts";
import conversationProcess from "./conversationProcess.ts";

const deescalationProcess: MentalProcess = async ({ workingMemory }) => {
  const { speak, log } = useActions();
  const { invokingPerception } = usePerceptions();
  const { previousMentalProcess } = useProcessManager();

  if (previousMentalProcess === conversationProcess) {
    log("De-escalating after:", invokingPerception?.content);
  }

  const [withDialog, stream] = await externalDialog(
    workingMemory.withMemory({
      role: ChatMessageRoleEnum.System,
      content: indentNicely`
        ${workingMemory.soulName} notices that the user is upset.
        ${workingMemory.soulName} stays calm, acknowledges the feeling and never argues back.
      `,
    }),
    "Calmly acknowledge how the user feels, then offer one concrete way to help.",
    { stream: true }
  );
  speak(stream);

  return [withDialog, conversationProcess];
};

export default deescalationProcess;
