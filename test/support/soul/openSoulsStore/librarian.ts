/**
 * An Open Souls mental process that calls a tool as Open Souls' docs show `useTool`
 * (`const tool = useTool<Params, Response>("name"); const result = await tool(params)`) and
 * keeps what it learns with `useSoulStore`, with only its imports changed (from
 * "@opensouls/engine" to ensoul's paths).
 */
import { indentNicely, externalDialog } from "../../../../runtime/cognition/index.ts";
import { ChatMessageRoleEnum } from "../../../../runtime/cognition/index.ts";
import { type MentalProcess, useActions, usePerceptions, useSoulStore, useTool } from "../../../../actors/soul/index.ts";

interface LookUpBookParams {
  title: string;
}

interface BookInfo {
  title: string;
  author: string;
  year: number;
  summary: string;
}

const librarian: MentalProcess = async ({ workingMemory }) => {
  const { speak, log } = useActions();
  const { invokingPerception } = usePerceptions();
  const { set, search } = useSoulStore();
  const lookUpBook = useTool<LookUpBookParams, BookInfo>("lookUpBook");

  const content = invokingPerception?.content ?? "";
  if (content.startsWith("look up ")) {
    const book = await lookUpBook({ title: content.slice("look up ".length).trim() });
    log("looked up", book.title);
    set(`book-${book.title}`, `${book.title} by ${book.author} (${book.year}): ${book.summary}`, { kind: "book", author: book.author, year: book.year });
    speak(`${book.title} is by ${book.author}, from ${book.year}. I'll remember it.`);
    return workingMemory.withMemory({
      role: ChatMessageRoleEnum.Assistant,
      content: `${workingMemory.soulName} looked up ${book.title}: ${book.summary}`,
    });
  }

  const books = await search(content, { filter: { kind: "book" }, minSimilarity: 0.1 });
  log("found", books.length, "books");
  const withBooks = workingMemory.withMemory({
    role: ChatMessageRoleEnum.Assistant,
    content: indentNicely`
      ## Books I know
      ${books.map((b) => `* ${b.content}`).join("\n")}
    `,
  });
  const [withDialog, stream] = await externalDialog(withBooks, "Answer from the books you know.", { stream: true });
  speak(stream);
  return withDialog;
};

export default librarian;
