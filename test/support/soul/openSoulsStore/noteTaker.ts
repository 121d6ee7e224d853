/**
 * An Open Souls mental process that uses the soul store as Open Souls' docs show it, with
 * only its imports changed (from "@opensouls/engine" to ensoul's paths).
 */
import { indentNicely, externalDialog } from "../../../../runtime/cognition/index.ts";
import { ChatMessageRoleEnum } from "../../../../runtime/cognition/index.ts";
import { type MentalProcess, useActions, usePerceptions, useSoulStore } from "../../../../actors/soul/index.ts";

const noteTaker: MentalProcess = async ({ workingMemory }) => {
  const { speak, log } = useActions();
  const { invokingPerception } = usePerceptions();
  const { set, fetch, search } = useSoulStore();

  const content = invokingPerception?.content ?? "";
  if (content.startsWith("note:")) {
    const note = content.slice("note:".length).trim();
    const count = ((await fetch<number>("noteCount")) ?? 0) + 1;
    set(`note-${count}`, note, { kind: "note", author: invokingPerception!.name });
    set("noteCount", count);
    speak(`Noted (${count}).`);
    return workingMemory;
  }

  const results = await search(content, { minSimilarity: 0.1 });
  const notes = results.filter((r) => r.metadata.kind === "note").slice(0, 2);
  log("found", notes.length, "notes");
  const withNotes = workingMemory.withMemory({
    role: ChatMessageRoleEnum.Assistant,
    content: indentNicely`
      ## Notes
      ${notes.map((n) => `* ${n.content}`).join("\n")}
    `,
  });
  const [withDialog, stream] = await externalDialog(withNotes, "Answer from the notes.", { stream: true });
  speak(stream);
  return withDialog;
};

export default noteTaker;
