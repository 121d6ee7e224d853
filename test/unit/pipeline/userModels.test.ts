import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runPipeline, WorkingMemory } from "../../../runtime/cognition/index.ts";
import { blankUserModel, userModelFileName, userModels, USER_MODEL_SECTIONS } from "../../../runtime/store/index.ts";
import { answerFor, fakeModel, withModel } from "../../support/pipeline/fakeModel.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();

describe("user models in LMDB", () => {
  it("the blank model has the seven blueprint sections", () => {
    const md = blankUserModel("Tom");
    expect(md.startsWith("# Tom\n")).toBe(true);
    expect([...md.matchAll(/^## (.+)$/gm)].map((m) => m[1])).toEqual([...USER_MODEL_SECTIONS]);
  });

  it("versions and change notes survive closing and reopening the store", async () => {
    const first = stores.open();
    const tom = userModels(first, "samantha").forUser("U123");
    expect(tom.latest()).toBeUndefined();
    const v1 = await tom.save(blankUserModel("Tom"), "First met.");
    const v2 = await tom.save("# Tom\n\n## Persona\nScholar.", "He is a scholar.");
    expect([v1.version, v2.version]).toEqual([1, 2]);
    await userModels(first, "samantha").forUser("U999").save("# Ann", "Met Ann.");
    await first.close();

    const reopened = stores.open();
    const models = userModels(reopened, "samantha");
    const again = models.forUser("U123");
    expect(again.latest()).toMatchObject({ version: 2, markdown: "# Tom\n\n## Persona\nScholar.", changeNote: "He is a scholar." });
    expect(again.history().map((v) => [v.version, v.changeNote])).toEqual([
      [1, "First met."],
      [2, "He is a scholar."],
    ]);
    expect(models.users()).toEqual(["U123", "U999"]);
    // Another soul sees none of them.
    expect(userModels(reopened, "claudius").users()).toEqual([]);
    // Versions continue after the restart.
    expect((await again.save("# Tom v3", "Third.")).version).toBe(3);
  });

  it("concurrent saves get distinct versions, and an empty model is refused", async () => {
    const tom = userModels(stores.open(), "samantha").forUser("tom");
    const saved = await Promise.all([tom.save("# a", "a"), tom.save("# b", "b"), tom.save("# c", "c")]);
    expect(saved.map((v) => v.version)).toEqual([1, 2, 3]);
    await expect(tom.save("  ", "nothing")).rejects.toThrow(/empty/);
    expect(tom.history()).toHaveLength(3);
  });

  it("exports the latest model and the history as markdown files", async () => {
    const store = stores.open();
    const models = userModels(store, "samantha");
    await models.forUser("tom").save("# Tom\n\n## Persona\nv1", "First.");
    await models.forUser("tom").save("# Tom\n\n## Persona\nv2", "Second.");
    await models.forUser("../evil/ann").save("# Ann", "Met Ann.");
    const dir = join(stores.dir(), "export");
    const written = await models.exportMarkdown(dir);
    expect(written).toHaveLength(4);
    expect(readFileSync(join(dir, "tom.md"), "utf8")).toBe("# Tom\n\n## Persona\nv2\n");
    const history = readFileSync(join(dir, "tom.history.md"), "utf8");
    expect(history.indexOf("Change note: Second.")).toBeLessThan(history.indexOf("Change note: First."));
    expect(history).toContain("## Version 1");
    const evil = userModelFileName("../evil/ann");
    expect(evil).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(existsSync(join(dir, `${evil}.md`))).toBe(true);
    expect(written.every((p) => p.startsWith(dir))).toBe(true);
  });

  it("a pipeline turn's update is what gets saved, with its change note", async () => {
    const store = stores.open();
    const tom = userModels(store, "samantha").forUser("tom");
    await tom.save(blankUserModel("Tom"), "First met.");
    const [, result] = await withModel(fakeModel((req) => answerFor(req, { userModelCheck: true })), () =>
      runPipeline(new WorkingMemory({ soulName: "Samantha" }), { message: { text: "I like tea", userName: "Tom" }, userModel: tom.latest()?.markdown }),
    );
    expect(result.userModelUpdate).toBeDefined();
    await tom.save(result.userModelUpdate!, result.changeNote ?? "");
    expect(tom.latest()).toMatchObject({ version: 2, changeNote: "Learned he likes tea." });
  });
});
