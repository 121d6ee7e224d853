/**
 * The recall example (examples/recall): a soul whose working memory keeps only the last six
 * memories of conversation is told a fact, talks about other things for twenty turns, and
 * is then asked about it. The fact is long gone from its window, yet the model's prompt
 * holds it, in the `recall` region its memory integrator filled from the soul store; also
 * after the soul was passivated (a new runtime, the same node's service) and after a restart
 * (the store reopened, a new service that rebuilds its index from LMDB).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSoul, type Soul } from "../../../actors/soul/index.ts";
import type { CompletionRequest } from "../../../runtime/providers/index.ts";
import { createSoulStoreService, openStore, type Store } from "../../../runtime/store/index.ts";
import { UNTRUSTED_NOTICE } from "../../../runtime/cognition/index.ts";
import recall, { WINDOW } from "../../../examples/recall/soul.ts";
import { said } from "../../support/soul/helpers.ts";
import { cognitionWith, countingModel } from "../../unit/daimon/daimonTestKit.ts";

const FACT = "My sister Philippa lives in Oslo and keeps bees";
const SMALL_TALK = [
  "The weather was grey this morning",
  "I had porridge for breakfast",
  "Work was busy with meetings",
  "The train was late again",
  "I am reading a novel about whales",
  "My neighbour painted his fence green",
];

let dir: string | undefined;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  store = undefined;
  dir = undefined;
});

function prompt(request: CompletionRequest | undefined): { recalled: string | undefined; window: string[] } {
  const messages = request?.messages ?? [];
  return {
    recalled: messages.find((m) => m.role === "system" && m.content.startsWith("## Things you remember"))?.content,
    window: messages.filter((m) => m.role === "user").map((m) => m.content),
  };
}

describe("recall beyond the working-memory window", () => {
  it("brings back a fact from twenty turns ago, also after passivation and a restart", async () => {
    dir = mkdtempSync(join(tmpdir(), "ensoul-recall-"));
    store = openStore({ path: dir, noSync: true });
    const model = countingModel("I remember.");
    const soulStore = createSoulStoreService();
    const start = (s: Store, service = soulStore): Soul =>
      createSoul({ blueprint: recall, id: "mnemo", store: s.actor("mnemo"), cognition: cognitionWith(model.model), services: { soulStore: service } });
    const say = async (soul: Soul, text: string) => {
      await soul.perceive(said(text, "Ada"));
      await soul.idle();
    };

    let soul = start(store);
    await say(soul, FACT);
    for (let i = 0; i < 20; i++) await say(soul, SMALL_TALK[i % SMALL_TALK.length] as string);
    await say(soul, "Where does my sister live?");
    const asked = prompt(model.calls.at(-1));
    expect(asked.recalled).toContain(FACT);
    // What a person said reaches the prompt fenced, even when recalled into a system memory.
    expect(asked.recalled).toContain(UNTRUSTED_NOTICE);
    // The window holds the question and recent small talk, not the fact.
    expect(asked.window.some((m) => m.includes("Philippa"))).toBe(false);
    expect(asked.window.length).toBeLessThanOrEqual(WINDOW);
    expect(asked.window.at(-1)).toContain("Where does my sister live?");
    expect(store.actor("mnemo").loadState()?.turn).toBe(22);

    // Passivated: the runtime goes, the node's service (and its index) stays.
    await soul.stop();
    soul = start(store);
    await say(soul, "Who keeps bees?");
    expect(prompt(model.calls.at(-1)).recalled).toContain(FACT);
    await soul.stop();

    // Restarted: a new store handle and a new service; the index is rebuilt from LMDB.
    await store.close();
    store = openStore({ path: dir, noSync: true });
    soul = start(store, createSoulStoreService());
    await say(soul, "Remind me where Philippa lives");
    const after = prompt(model.calls.at(-1));
    expect(after.recalled).toContain(FACT);
    expect(after.window.some((m) => m.includes("Philippa lives in Oslo"))).toBe(false);
    await soul.stop();
  });
});
