/**
 * An Open Souls process that uses `useSoulStore` (destructured set/fetch/search, metadata,
 * minSimilarity) runs unchanged apart from its imports.
 */
import { describe, expect, it } from "vitest";
import { createSoul, defineSoul } from "../../../actors/soul/index.ts";
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
});
