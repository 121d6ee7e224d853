/**
 * Claudius's user models: a new version with its change note for every rewrite, per person,
 * kept across a restart (the LMDB environment closed and reopened, a new soul with the same
 * id), and shown back to Claudius when the Samantha-Dreams gate opens after the restart.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CognitionContext } from "../../../runtime/cognition/index.ts";
import { createAnthropicModel, ModelRegistry } from "../../../runtime/providers/index.ts";
import { userModels } from "../../../runtime/store/index.ts";
import { claudius, createClaudius } from "../../../souls/claudius/index.ts";
import { startAnthropicServer, type ScriptedServer } from "../../support/wire/anthropicServer.ts";
import { startClaudiusRig, type ClaudiusRig } from "../../support/souls/claudiusRig.ts";
import { pipelineAnswer, userModelOf } from "../../support/souls/pipelineAnswer.ts";
import { promptText, wireScript } from "../../support/souls/wireScript.ts";

let server: ScriptedServer;
let rig: ClaudiusRig | undefined;

beforeAll(async () => {
  server = await startAnthropicServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  server.reset();
});

const cognition = (): CognitionContext => ({
  registry: new ModelRegistry().register("anthropic", createAnthropicModel({ apiKey: "test", baseURL: server.url })),
  defaultModel: "anthropic:claude-test",
});

describe("Claudius's versioned user models", () => {
  it("keeps every version with its change note across a restart, per person", async () => {
    const script = wireScript(server);
    rig = await startClaudiusRig({
      // No cooldown between rewrites, so two turns make two versions.
      blueprint: (store) => createClaudius({ userModels: (id) => userModels(store, id), pipeline: { userModelInterval: 1 } }),
      cognition: cognition(),
      requestCount: () => script.requests.length,
    });
    const r = rig;

    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: "A restorer.",
        dialogue: "Claudius. Show me the plane.",
        userModelCheck: true,
        userModel: userModelOf("Tom", "VERSION-ONE: restores hand planes."),
        changeNote: "Met Tom, a restorer of hand planes.",
      }),
    );
    await r.say("Hello, I'm Tom. I restore hand planes.");
    expect(userModels(r.store(), r.id).forUser("Tom").history()).toHaveLength(1);

    await r.restart();
    expect(r.soul().state()).toMatchObject({ process: "main", turn: 1 });

    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: "Freehand. Brave.",
        dialogue: "Freehand works, if your wrists are honest.",
        userModelCheck: true,
        userModel: userModelOf("Tom", "VERSION-TWO: sharpens freehand."),
        changeNote: "Tom sharpens freehand, without a jig.",
      }),
    );
    const turn = await r.say("I sharpen freehand, no jig.");
    expect(turn).toMatchObject({ errors: [], process: "main", requests: 1 });
    // The gate was open (the last check before the restart said true): the saved model was shown.
    expect(promptText(script.requests.at(-1)!)).toContain("VERSION-ONE: restores hand planes.");

    // A bridge's stable user id wins over the display name.
    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: "Someone new on the same bench.",
        dialogue: "Noted.",
        userModelCheck: true,
        userModel: userModelOf("Ann", "Ann, by her platform id."),
        changeNote: "Met Ann.",
      }),
    );
    await r.say("Ann here, on Tom's account.", "Ann", { userId: "U123" });

    await r.restart();
    const models = userModels(r.store(), r.id);
    const tom = models.forUser("Tom").history();
    expect(tom.map((v) => [v.version, v.changeNote])).toEqual([
      [1, "Met Tom, a restorer of hand planes."],
      [2, "Tom sharpens freehand, without a jig."],
    ]);
    expect(tom[0].markdown).toContain("VERSION-ONE");
    expect(models.forUser("Tom").latest()?.markdown).toContain("VERSION-TWO");
    expect(models.forUser("U123").history().map((v) => v.changeNote)).toEqual(["Met Ann."]);
    expect(models.users()).toEqual(["Tom", "U123"]);

    // And they export as markdown with their notes.
    const paths = await models.exportMarkdown(join(r.dir, "export"));
    const history = readFileSync(paths.find((p) => p.endsWith("Tom.history.md"))!, "utf8");
    expect(history).toContain("Change note: Tom sharpens freehand, without a jig.");
  });

  it("the registered claudius keeps the versions in the soul's LMDB store, committed with the turn, across a restart", async () => {
    const script = wireScript(server);
    rig = await startClaudiusRig({ blueprint: () => claudius, cognition: cognition(), requestCount: () => script.requests.length });
    const r = rig;
    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: "A restorer.",
        dialogue: "Claudius.",
        userModelCheck: true,
        userModel: userModelOf("Tom", "Kept in LMDB."),
        changeNote: "Met Tom.",
      }),
    );
    await r.say("Hello, I'm Tom.");
    await r.restart();
    const tom = userModels(r.store(), r.id).forUser("Tom").history();
    expect(tom.map((v) => [v.version, v.changeNote])).toEqual([[1, "Met Tom."]]);
    expect(tom[0].markdown).toContain("Kept in LMDB.");
    // No soul-memory copy any more: the store is the one place they live.
    expect(r.soul().memory().soulMemory["userModels"]).toBeUndefined();
  });
});

describe("user models of people whose names are not plain", () => {
  it("answers a display name with a newline, and finds its model by that name (and a plain name's older keys still)", async () => {
    const script = wireScript(server);
    rig = await startClaudiusRig({
      blueprint: (store) => createClaudius({ userModels: (id) => userModels(store, id), pipeline: { userModelInterval: 1 } }),
      cognition: cognition(),
      requestCount: () => script.requests.length,
    });
    const r = rig;
    // A model saved under a plain name's raw key, as every version before names were encoded.
    await r.store().kv(r.id, "userModels").put(["Tom", 1], { version: 1, markdown: "# Tom\nOlder.", changeNote: "Met Tom.", ts: 1 });

    const name = "Ada\nLovelace";
    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: "Two lines of a name.",
        dialogue: "Welcome, Ada.",
        userModelCheck: true,
        userModel: userModelOf("Ada", "Writes programs for engines."),
        changeNote: "Met Ada.",
      }),
    );
    const turn = await r.say("I write programs for engines.", name);
    expect(turn).toMatchObject({ errors: [], spoken: ["Welcome, Ada."] });

    await r.restart();
    const models = userModels(r.store(), r.id);
    expect(models.forUser(name).history().map((v) => v.changeNote)).toEqual(["Met Ada."]);
    expect(models.forUser(name).latest()?.markdown).toContain("Writes programs for engines.");
    expect(models.forUser("Tom").latest()?.markdown).toContain("Older.");
    expect(models.users().sort()).toEqual([name, "Tom"].sort());
    // Saving again under a plain name continues its old versions.
    expect((await models.forUser("Tom").save("# Tom\nNewer.", "Saw Tom again.")).version).toBe(2);
  });
});
