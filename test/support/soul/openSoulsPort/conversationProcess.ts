import { type MentalProcess, useActions } from "../../../../actors/soul/index.ts";
import { externalDialog, mentalQuery } from "../../../../runtime/cognition/index.ts";
import deescalationProcess from "./deescalationProcess.ts";

const conversationProcess: MentalProcess = async ({ workingMemory }) => {
  const { speak, log } = useActions();

  const [withAngerCheck, isAngry] = await mentalQuery(
    workingMemory,
    "The user is angry, hostile or very frustrated."
  );
  log("Is the user angry?", isAngry);

  if (isAngry) {
    return [withAngerCheck, deescalationProcess, { executeNow: true }];
  }

  const [withDialog, stream] = await externalDialog(
    withAngerCheck,
    "Respond normally: friendly, helpful and brief.",
    { stream: true }
  );
  speak(stream);

  return withDialog;
};

export default conversationProcess;
