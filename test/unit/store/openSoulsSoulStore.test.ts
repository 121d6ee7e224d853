/**
 * Open Souls processes that use `useSoulStore` (destructured set/fetch/search, metadata,
 * filter, minSimilarity) and `useTool` (`useTool<Params, Response>(name)`, then awaited with
 * its params) run unchanged apart from their imports.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createSoul, defineSoul } from "../../../actors/soul/index.ts";
import { createToolRegistry, defineTool, type ToolEvent } from "../../../actors/tool/index.ts";
import librarian from "../../support/soul/openSoulsStore/librarian.ts";
import noteTaker from "../../support/soul/openSoulsStore/noteTaker.ts";
import { record, said } from "../../support/soul/helpers.ts";
import { tempStores } from "../../support/store/tempStore.ts";
import { cognitionWith, countingModel } from "../daimon/daimonTestKit.ts";

const stores = tempStores();

describe("an Open Souls blueprint with useSoulStore", () => {
  it("notes, fetches and searches as in Open Souls", async () => {
    const store = stores.open({ noSync: true });
    const model = countingModel("From your notes: the spare key is under the blue pot.");
    const blueprint = defineSoul({ name: "Notary", persona: "takes notes", initialProcess: noteTaker, processes: { noteTaker } });
    const soul = createSoul({ blueprint, id: "notary", store: store.actor("notary"), cognition: cognitionWith(model.model) });
    const log = record(soul);
    for (const text of ["note: the spare key is under the blue pot", "note: the wifi password is on the fridge", "where is the spare key?"]) {
      await soul.perceive(said(text));
      await soul.idle();
    }
    expect(log.errors()).toEqual([]);
    expect(log.said()).toEqual(["Noted (1).", "Noted (2).", "From your notes: the spare key is under the blue pot."]);
    const notes = model.calls.at(-1)?.messages.find((m) => m.content.includes("## Notes"))?.content ?? "";
    expect(notes.split("\n")[1]).toBe("* the spare key is under the blue pot");
    expect(store.kv("notary", "soulStore").get("noteCount")).toMatchObject({ content: 2 });
    await soul.stop();
  });

  it("calls a tool with useTool, keeps its result in the soul store and answers from it later", async () => {
    const store = stores.open({ noSync: true });
    const CATALOGUE: Record<string, { author: string; year: number; summary: string }> = {
      Dune: { author: "Frank Herbert", year: 1965, summary: "A desert planet, its spice, and a boy who becomes a prophet." },
      Emma: { author: "Jane Austen", year: 1815, summary: "A young matchmaker in an English village meddles in love." },
    };
    const calls: unknown[] = [];
    // The host side of the tool: in Open Souls the client registered it; here the soul is given it as a service.
    const lookUpBook = defineTool({
      name: "lookUpBook",
      description: "Finds a book by its title",
      input: z.object({ title: z.string() }),
      run: (input) => {
        calls.push(input);
        const book = CATALOGUE[input.title];
        if (!book) throw new Error(`no book called ${input.title}`);
        return { title: input.title, ...book };
      },
    });
    const model = countingModel("Dune, by Frank Herbert: a desert planet and its spice.");
    const blueprint = defineSoul({ name: "Librarian", persona: "remembers books", initialProcess: librarian, processes: { librarian } });
    const soul = createSoul({
      blueprint,
      id: "librarian",
      store: store.actor("librarian"),
      cognition: cognitionWith(model.model),
      services: { tools: createToolRegistry([lookUpBook]) },
    });
    const log = record(soul);
    for (const text of ["look up Dune", "look up Emma", "which book has a desert planet?"]) {
      await soul.perceive(said(text));
      await soul.idle();
    }
    expect(log.errors()).toEqual([]);

    // The tool was called, with the params the process gave it, through the soul's tool box.
    expect(calls).toEqual([{ title: "Dune" }, { title: "Emma" }]);
    const toolEvents = log.events.filter((e): e is ToolEvent => e.type.startsWith("tool."));
    expect(toolEvents.map((e) => [e.type, e.tool])).toEqual([
      ["tool.call", "lookUpBook"],
      ["tool.result", "lookUpBook"],
      ["tool.call", "lookUpBook"],
      ["tool.result", "lookUpBook"],
    ]);
    expect(toolEvents[1]).toMatchObject({ outcome: "ok", value: { title: "Dune", author: "Frank Herbert", year: 1965 } });

    // Its result reached the soul's speech and its working memory.
    expect(log.said()).toEqual([
      "Dune is by Frank Herbert, from 1965. I'll remember it.",
      "Emma is by Jane Austen, from 1815. I'll remember it.",
      "Dune, by Frank Herbert: a desert planet and its spice.",
    ]);
    const memories = store.actor("librarian").loadState()?.workingMemory as { memories: { content: string }[] };
    expect(memories.memories.map((m) => m.content)).toContain(`Librarian looked up Dune: ${CATALOGUE["Dune"]!.summary}`);

    // And the soul store: written with the turns, found again by search for the question.
    expect(store.kv("librarian", "soulStore").get(["book-Dune"])).toMatchObject({
      content: `Dune by Frank Herbert (1965): ${CATALOGUE["Dune"]!.summary}`,
      metadata: { kind: "book", author: "Frank Herbert", year: 1965 },
    });
    expect(store.kv("librarian", "soulStore").get(["book-Emma"])).toMatchObject({ metadata: { author: "Jane Austen" } });
    const known = model.calls.at(-1)?.messages.find((m) => m.content.includes("## Books I know"))?.content ?? "";
    expect(known.split("\n")[1]).toBe(`* Dune by Frank Herbert (1965): ${CATALOGUE["Dune"]!.summary}`);
    // Only the question turn asked the model: the look-ups spoke the tool's answer.
    expect(model.calls).toHaveLength(1);
    await soul.stop();
  });
});
