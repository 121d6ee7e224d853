/**
 * An Open Souls blueprint, ported: introduction hands off to a conversation process, which
 * escalates to de-escalation on an angry user (executeNow, same perception), as in the
 * mental-processes reference. The process files are Open Souls code; only their import paths
 * (and soul.ts, which declares the processes and their successors) are ensoul's.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createInProcessOutlet, createSoul } from "../../../actors/soul/index.ts";
import blueprint from "../../support/soul/openSoulsPort/soul.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { record, said } from "../../support/soul/helpers.ts";
import { scriptedCognition, scriptedModel, verdict } from "../../support/soul/scriptedModel.ts";

const env = useTestEnv();

const PROCESS_FILES = ["introduction.ts", "conversationProcess.ts", "deescalationProcess.ts"];

/** What an Open Souls blueprint imports from `@opensouls/engine` (hooks, steps, helpers, types). */
const OPEN_SOULS_NAMES = new Set([
  "MentalProcess",
  "WorkingMemory",
  "ChatMessageRoleEnum",
  "indentNicely",
  "createCognitiveStep",
  "stripEntityAndVerb",
  "stripEntityAndVerbFromStream",
  "useActions",
  "usePerceptions",
  "useProcessManager",
  "useProcessMemory",
  "useSoulMemory",
  "externalDialog",
  "internalMonologue",
  "mentalQuery",
  "decision",
  "brainstorm",
  "instruction",
  "summarize",
]);

const IMPORT = /^import\s+([\s\S]*?)\s+from\s+["']([^"']+)["'];?\s*$/gm;

function split(source: string): { imports: { names: string[]; from: string }[]; body: string } {
  const imports: { names: string[]; from: string }[] = [];
  const body = source.replace(IMPORT, (_all, clause: string, from: string) => {
    const names = clause
      .replace(/[{}]/g, " ")
      .split(/[\s,]+/)
      .filter((n) => n && n !== "type");
    imports.push({ names, from });
    return "";
  });
  return { imports, body };
}

/** Identifiers in code, with the words inside plain string literals left out (prompts are English). */
function identifiers(code: string): Set<string> {
  const withoutStrings = code.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');
  return new Set(withoutStrings.match(/[A-Za-z_$][\w$]*/g) ?? []);
}

describe("an Open Souls blueprint, ported", () => {
  it("is Open Souls code apart from its import lines", async () => {
    // Everything ensoul exports that a blueprint could call; an Open Souls file may use only the Open Souls part.
    const ensoulApi = new Set([
      ...Object.keys(await import("../../../actors/soul/index.ts")),
      ...Object.keys(await import("../../../runtime/cognition/index.ts")),
      ...Object.keys(await import("../../../actors/ism/index.ts")),
      // Types leave no runtime export; these are ensoul's own names for things.
      "SoulBlueprint",
      "Soul",
      "TurnScope",
      "ProcessRef",
      "ProcessResult",
      "PerceptionInput",
    ]);
    const siblings = new Set(PROCESS_FILES.map((f) => f.replace(/\.ts$/, "")));
    for (const file of PROCESS_FILES) {
      const source = readFileSync(new URL(`../../support/soul/openSoulsPort/${file}`, import.meta.url), "utf8");
      const { imports, body } = split(source);
      expect(imports.length).toBeGreaterThan(0);
      for (const { names, from } of imports) {
        if (from.startsWith("./")) {
          // A sibling process, by default import, as Open Souls files import each other.
          expect(names).toHaveLength(1);
          expect(siblings.has(names[0])).toBe(true);
        } else {
          for (const name of names) expect(OPEN_SOULS_NAMES.has(name), `${file} imports ${name}`).toBe(true);
        }
      }
      // Below the imports: no import, no ensoul-only name, no mention of ensoul.
      expect(body).not.toMatch(/\bimport\b|\brequire\(/);
      expect(body.toLowerCase()).not.toContain("ensoul");
      const foreign = [...identifiers(body)].filter((id) => ensoulApi.has(id) && !OPEN_SOULS_NAMES.has(id));
      expect(foreign, `${file} uses ${foreign.join(", ")}`).toEqual([]);
      // And it does use the Open Souls API it imports.
      for (const { names, from } of imports) if (!from.startsWith("./")) for (const name of names) expect(identifiers(body).has(name)).toBe(true);
    }
  });

  it("runs: greeting -> conversation; an angry message escalates at once with the same perception; a calm one stays", async () => {
    const model = scriptedModel({
      dialog: [
        "Hi, I'm Samantha. What can I help you with today?",
        "I can hear how frustrating this is. Let's fix it together: what did you try last?",
        "Great, glad that helped!",
      ],
      query: [verdict(true), verdict(false)],
    });
    const outlet = createInProcessOutlet();
    const chunks: string[] = [];
    outlet.onChunk((c) => chunks.push(c.text));
    const soul = createSoul({ blueprint, id: "samantha", store: env.actor("samantha"), outlet, cognition: scriptedCognition(model) });
    const log = record(soul);
    const transitions = () => log.events.flatMap((e) => (e.type === "transition" ? [[e.from, e.to, e.executeNow, e.perceptionId]] : []));

    // introduction greets and hands off to the conversation.
    await soul.perceive(said("hey"));
    await soul.idle();
    expect(log.said()).toEqual(["Hi, I'm Samantha. What can I help you with today?"]);
    expect(soul.state()).toMatchObject({ process: "conversationProcess", previousProcess: "introduction", turn: 1 });
    // The persona from soul.md is the memory's core region, as Open Souls' static memory is.
    expect(model.calls[0].messages[0].content).toContain("Samantha is a patient support engineer");

    // An angry user: mentalQuery says true, conversationProcess returns [memory, deescalationProcess, { executeNow: true }].
    const angry = await soul.perceive(said("This is USELESS. I have been waiting for an hour and nothing works!"));
    await soul.idle();
    expect(transitions().slice(1)).toEqual([
      ["conversationProcess", "deescalationProcess", true, angry.id],
      ["deescalationProcess", "conversationProcess", false, angry.id],
    ]);
    expect(log.said().at(-1)).toBe("I can hear how frustrating this is. Let's fix it together: what did you try last?");
    expect(soul.state()).toMatchObject({ process: "conversationProcess", previousProcess: "deescalationProcess", turn: 2 });
    // deescalationProcess ran for the same perception: it saw the query's verdict and its own instruction, with no new input.
    const deescalation = model.calls.filter((c) => c.kind === "dialog")[1];
    const prompt = deescalation.messages.map((m) => m.content).join("\n");
    expect(prompt).toContain("decided that the statement is true");
    expect(prompt).toContain("notices that the user is upset");
    expect(prompt.match(/I have been waiting for an hour/g)).toHaveLength(1);

    // A calm message: the query says false and the conversation answers, staying where it is.
    await soul.perceive(said("ok, restarting fixed it, thanks"));
    await soul.idle();
    expect(transitions()).toHaveLength(3);
    expect(log.said().at(-1)).toBe("Great, glad that helped!");
    expect(soul.state()).toMatchObject({ process: "conversationProcess", turn: 3 });

    // The answers streamed through the outlet as they came.
    expect(chunks.join("")).toContain("Great, glad that helped!");
    expect(model.left()).toEqual({});
    expect(log.errors()).toEqual([]);
    // The blueprint's `log` calls became the soul's log events once their turns committed; the
    // de-escalation's shows `usePerceptions` and `useProcessManager().previousMentalProcess` (by identity) at work.
    const logged = log.events.flatMap((e) => (e.type === "log" ? [e.message] : []));
    expect(logged).toEqual([
      "Is the user angry? true",
      "De-escalating after: This is USELESS. I have been waiting for an hour and nothing works!",
      "Is the user angry? false",
    ]);
    await soul.stop();
  });
});
