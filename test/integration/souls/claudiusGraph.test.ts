/**
 * Claudius's whole process graph, driven through the REAL Anthropic SDK against a local
 * server that speaks the Messages API and answers from a script:
 *
 *   greeting -> main -> frustrated -> main -> problemSolving (ISM) -> main -> frustrated
 *     -> deepWork -> main, and main -> problemSolving -> deepWork (Escalate) -> main,
 *     and main -> problemSolving -> main (the ISM ends without answering; main answers).
 *
 * Every ordinary turn is exactly one request; the ISM's turns are the pipeline's one plus
 * the ISM's own.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createClaudius, claudius, ESCALATED_TASK, OPEN_PROBLEM_MARKER, TASK_COMPLETE_MARKER } from "../../../souls/claudius/index.ts";
import { builtinSouls } from "../../../souls/index.ts";
import type { CognitionContext } from "../../../runtime/cognition/index.ts";
import { createAnthropicModel, ModelRegistry } from "../../../runtime/providers/index.ts";
import { userModels } from "../../../runtime/store/index.ts";
import { startAnthropicServer, type ScriptedServer } from "../../support/wire/anthropicServer.ts";
import { pipelineAnswer, userModelOf } from "../../support/souls/pipelineAnswer.ts";
import { choose, occurrences, promptText, wireScript, type WireScript } from "../../support/souls/wireScript.ts";
import { startClaudiusRig, type ClaudiusRig } from "../../support/souls/claudiusRig.ts";

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

function anthropicCognition(): CognitionContext {
  const registry = new ModelRegistry().register("anthropic", createAnthropicModel({ apiKey: "test", baseURL: server.url }));
  return { registry, defaultModel: "anthropic:claude-test" };
}

/** The prompt of the last request. */
const lastPrompt = (script: WireScript) => promptText(script.requests.at(-1)!);

async function startWithStore(script: WireScript): Promise<ClaudiusRig> {
  return startClaudiusRig({
    blueprint: (store) => createClaudius({ userModels: (id) => userModels(store, id) }),
    cognition: anthropicCognition(),
    requestCount: () => script.requests.length,
  });
}

describe("Claudius's process graph over the real Anthropic SDK", () => {
  it("is registered in builtinSouls, beside samantha", () => {
    expect(builtinSouls["claudius"]).toBe(claudius);
    expect(builtinSouls["samantha"]).toBeDefined();
    expect([...claudius.processes.keys()].sort()).toEqual(["deepWork", "frustrated", "greeting", "main", "problemSolving"]);
    expect(claudius.initialProcess).toBe("greeting");
  });

  it("takes every transition of the graph, one request per ordinary turn", async () => {
    const script = wireScript(server);
    rig = await startWithStore(script);
    const r = rig;

    // 1. greeting -> main: the persona is in the prompt, no soul-state check; the user model is written.
    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: "A restorer. Good; they will care about the steel.",
        dialogue: "Claudius, maker of things that hold. Wood-bodied planes or iron?",
        dialogueVerb: "observed",
        userModelCheck: true,
        userModel: userModelOf("Tom", "A restorer of old hand planes."),
        changeNote: "Met Tom, who restores hand planes.",
      }),
    );
    let turn = await r.say("Hello. I'm Tom, I restore old hand planes.");
    expect(turn.errors).toEqual([]);
    expect(turn.spoken).toEqual(["Claudius, maker of things that hold. Wood-bodied planes or iron?"]);
    expect(turn.process).toBe("main");
    expect(turn.requests).toBe(1);
    expect(turn.transitions).toEqual(["greeting->main"]);
    let prompt = lastPrompt(script);
    expect(prompt).toContain("# Claudius, Artifex Maximus");
    expect(prompt).not.toContain("Soul State Check");
    expect(prompt).toContain("Introduce yourself in one sentence");
    expect(script.requests.at(-1)!.stream).toBe(true);
    const history = userModels(r.store(), "claudius").forUser("Tom").history();
    expect(history.map((v) => [v.version, v.changeNote])).toEqual([[1, "Met Tom, who restores hand planes."]]);

    // 2. main stays main: the user model goes into the prompt (the last check was true).
    script.script("pipeline", pipelineAnswer({ monologue: "The bevel question.", dialogue: "Twenty-five degrees, honed at thirty.", userModelCheck: false }));
    turn = await r.say("What angle should I hone a plane iron to?");
    expect(turn).toMatchObject({ spoken: ["Twenty-five degrees, honed at thirty."], process: "main", requests: 1, transitions: [] });
    prompt = lastPrompt(script);
    expect(prompt).toContain("## User Model");
    expect(prompt).toContain("A restorer of old hand planes.");
    // Not sent again as a first-turn section: kept once, as the thread's context.
    expect(occurrences(prompt, "You are Claudius, Artifex Maximus")).toBe(1);

    // 3. main -> frustrated: the third interaction checks the soul state, which turns frustrated.
    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: "They did not read what I wrote.",
        dialogue: "I answered the bevel. Read it again.",
        dialogueVerb: "insisted",
        userModelCheck: false,
        soulStateCheck: true,
        soulState: { emotionalState: "frustrated", currentTopic: "bevel angles" },
      }),
    );
    turn = await r.say("No, that's wrong, I asked about the bevel. Pay attention.");
    expect(turn).toMatchObject({ spoken: ["I answered the bevel. Read it again."], process: "frustrated", requests: 1, transitions: ["main->frustrated"] });
    expect(lastPrompt(script)).toContain("Soul State Check");
    expect(r.soul().memory().soulMemory).toMatchObject({ emotionalState: "frustrated", currentTopic: "bevel angles", currentProcess: "frustrated" });

    // 4. frustrated -> main: no user-model work, 1-2 sentences; the mood turns engaged.
    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: "Fine, they have it now.",
        dialogue: "Yes. Twenty-five.",
        dialogueVerb: "corrected",
        soulStateCheck: true,
        soulState: { emotionalState: "engaged" },
      }),
    );
    turn = await r.say("Fine. So, 25 degrees?");
    expect(turn).toMatchObject({ spoken: ["Yes. Twenty-five."], process: "main", requests: 1, transitions: ["frustrated->main"] });
    prompt = lastPrompt(script);
    expect(prompt).toContain("Keep responses to 1-2 sentences. Use verbs: pointed out, corrected, insisted.");
    expect(prompt).not.toContain("User Model Check");
    expect(prompt).not.toContain("## User Model");
    expect(prompt).toContain("- emotionalState: frustrated");
    expect(prompt).toContain("- currentProcess: frustrated");

    // 5. main -> problemSolving (ISM: Think, Research, Respond) -> main, for the same message.
    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: `A jig for irons of several widths. That wants working out.\n${OPEN_PROBLEM_MARKER}`,
        dialogue: "A jig, then. Let me work it through.",
        userModelCheck: false,
      }),
    );
    script.script("choice", choose(["Think"], "understand it first"), choose(["Research"], "prior art"), choose(["Respond"], "ready"));
    script.script("monologue", 'Claudius pondered: "The width varies; the angle must not."', 'Claudius recalled: "The Veritas and Eclipse guides register off the iron\'s sides."');
    script.script("dialog", 'Claudius explained: "Register the iron against a fence, not its width: one clamp, a stop block per angle."');
    turn = await r.say("I need a sharpening jig that takes irons of different widths. How should I approach it?");
    expect(turn.errors).toEqual([]);
    expect(turn.spoken).toEqual([
      "A jig, then. Let me work it through.",
      "Register the iron against a fence, not its width: one clamp, a stop block per angle.",
    ]);
    expect(turn.process).toBe("main");
    expect(turn.transitions).toEqual(["main=>problemSolving", "problemSolving->main"]);
    expect(turn.requests).toBe(7);
    expect(script.kinds().slice(-7)).toEqual(["pipeline", "choice", "monologue", "choice", "monologue", "choice", "dialog"]);
    // The ISM worked on the message the pipeline recorded, with its playbook.
    const choicePrompt = promptText(script.requests.at(-6)!);
    expect(choicePrompt).toContain("I need a sharpening jig");
    expect(choicePrompt).toContain("Respond ends the deliberation");
    // The playbook does not stay in the soul's memory.
    expect(r.soul().memory().workingMemory.memories.some((m) => m.region === "ism-playbook")).toBe(false);

    // 6. main -> frustrated again (interaction 6 checks the soul state).
    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: "Clamping was in the answer.",
        dialogue: "The clamp was in the answer. One clamp.",
        userModelCheck: false,
        soulStateCheck: true,
        soulState: { emotionalState: "frustrated" },
      }),
    );
    turn = await r.say("The jig keeps slipping! You never mentioned clamping.");
    expect(turn).toMatchObject({ process: "frustrated", requests: 1, transitions: ["main->frustrated"] });

    // 7. frustrated -> deepWork: the mood turns focused, with a task.
    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: "Enough talk. Build it.",
        dialogue: "Then we build the clamp. Base first.",
        soulStateCheck: true,
        soulState: { emotionalState: "focused", currentTask: "build the clamping jig" },
      }),
    );
    turn = await r.say("Let's just build the clamp. Walk me through it.");
    expect(turn).toMatchObject({ spoken: ["Then we build the clamp. Base first."], process: "deepWork", requests: 1, transitions: ["frustrated->deepWork"] });
    expect(r.soul().memory().soulMemory).toMatchObject({ emotionalState: "focused", currentTask: "build the clamping jig", currentProcess: "deepWork" });

    // 8. deepWork stays while the task is open: no user-model work, the task in the prompt.
    script.script("pipeline", pipelineAnswer({ monologue: "Base: 18 mm birch ply.", dialogue: "Cut the base from 18 mm birch ply, 300 by 120.", soulStateCheck: false }));
    turn = await r.say("Start with the base.");
    expect(turn).toMatchObject({ spoken: ["Cut the base from 18 mm birch ply, 300 by 120."], process: "deepWork", requests: 1, transitions: [] });
    prompt = lastPrompt(script);
    expect(prompt).toContain("- currentTask: build the clamping jig");
    expect(prompt).toContain("Use verbs: analyzed, traced, detailed.");
    expect(prompt).not.toContain("User Model Check");

    // 9. deepWork -> main: the update clears currentTask.
    script.script(
      "pipeline",
      pipelineAnswer({
        monologue: "It holds. Done.",
        dialogue: "Then the jig is finished.",
        soulStateCheck: true,
        soulState: { emotionalState: "engaged", currentTask: "" },
      }),
    );
    turn = await r.say("Done. It holds.");
    expect(turn).toMatchObject({ spoken: ["Then the jig is finished."], process: "main", requests: 1, transitions: ["deepWork->main"] });
    expect(r.soul().memory().soulMemory).toMatchObject({ currentTask: "", currentProcess: "main_process", emotionalState: "engaged" });

    // 10. main, ordinary again.
    script.script("pipeline", pipelineAnswer({ monologue: "Good.", dialogue: "Good work.", userModelCheck: false }));
    turn = await r.say("Thanks.");
    expect(turn).toMatchObject({ spoken: ["Good work."], process: "main", requests: 1 });

    expect(script.left()).toEqual({});
    // Every ordinary turn was one request: 10 turns, one of them the ISM's (7 requests).
    expect(script.requests).toHaveLength(9 + 7);
    // Only the soul state's own keys (and the user models fallback, unused here) are in soul memory.
    expect(Object.keys(r.soul().memory().soulMemory).sort()).toEqual(
      ["conversationSummary", "currentProcess", "currentProject", "currentTask", "currentTopic", "emotionalState"].sort(),
    );
  });

  it("ISM Escalate hands to deepWork at once; an ISM that ends without answering hands back to main, which answers", async () => {
    const script = wireScript(server);
    rig = await startWithStore(script);
    const r = rig;

    script.script("pipeline", pipelineAnswer({ monologue: "Hm.", dialogue: "Claudius. What are we making?", userModelCheck: false }));
    await r.say("Hi.");

    // main -> problemSolving -> (Escalate) deepWork, all for one message.
    script.script("pipeline", pipelineAnswer({ monologue: `A whole toolchest. ${OPEN_PROBLEM_MARKER}`, dialogue: "A chest is a project. Let me size it.", userModelCheck: false }));
    script.script("choice", choose(["Escalate"], "this is weeks of work"));
    // deepWork's first turn names the task in the model's own words, as its instructions ask.
    script.script(
      "pipeline",
      pipelineAnswer({ monologue: "Plan the carcass.", dialogue: "Start with the carcass: dovetailed, 900 wide.", soulStateCheck: true, soulState: { currentTask: "a Dutch tool chest" } }),
    );
    let turn = await r.say("Help me design and build a full Dutch tool chest.");
    expect(turn.errors).toEqual([]);
    expect(turn.transitions).toEqual(["main=>problemSolving", "problemSolving=>deepWork"]);
    expect(turn.process).toBe("deepWork");
    expect(turn.requests).toBe(3);
    expect(turn.spoken).toEqual(["A chest is a project. Let me size it.", "Start with the carcass: dovetailed, 900 wide."]);
    expect(r.soul().memory().soulMemory).toMatchObject({ emotionalState: "focused", currentTask: "a Dutch tool chest", currentProcess: "deepWork" });
    // deepWork's prompt had the task (Escalate's reference to the message, never its words) and the thread; the message was recorded once.
    expect(lastPrompt(script)).toContain(`- currentTask: ${ESCALATED_TASK}`);
    expect(lastPrompt(script)).toContain("Help me design and build a full Dutch tool chest.");
    const recorded = r.soul().memory().workingMemory.memories.filter((m) => m.role === "user" && m.content.includes("Dutch tool chest"));
    expect(recorded).toHaveLength(1);

    // deepWork -> main on the task-complete marker.
    script.script("pipeline", pipelineAnswer({ monologue: `Carcass, lid, till: all done.\n${TASK_COMPLETE_MARKER}`, dialogue: "The chest is done.", soulStateCheck: false }));
    turn = await r.say("Lid and till are on.");
    expect(turn).toMatchObject({ process: "main", requests: 1, transitions: ["deepWork->main"] });
    expect(r.soul().memory().soulMemory["currentTask"]).toBe("");

    // main -> problemSolving, the model says DONE at once: main answers the message itself, without flagging it again.
    script.script("pipeline", pipelineAnswer({ monologue: `Finish? ${OPEN_PROBLEM_MARKER}`, dialogue: "Finishes. Let me think.", userModelCheck: false }));
    script.script("choice", choose(["DONE"], "nothing to add"));
    script.script("pipeline", pipelineAnswer({ monologue: `Just answer. ${OPEN_PROBLEM_MARKER}`, dialogue: "Boiled linseed oil, then paste wax.", userModelCheck: false }));
    turn = await r.say("What finish should the chest get?");
    expect(turn.errors).toEqual([]);
    expect(turn.transitions).toEqual(["main=>problemSolving", "problemSolving=>main"]);
    expect(turn.process).toBe("main");
    expect(turn.requests).toBe(3);
    expect(turn.spoken).toEqual(["Finishes. Let me think.", "Boiled linseed oil, then paste wax."]);
    expect(script.left()).toEqual({});
  });

  it("a failed model call fails the turn and leaves the soul where it was", async () => {
    const script = wireScript(server);
    rig = await startWithStore(script);
    script.script("pipeline", pipelineAnswer({ monologue: "Hm.", dialogue: "Claudius.", userModelCheck: false }));
    await rig.say("Hi.");
    // Nothing scripted: the server answers 400.
    const turn = await rig.say("Again?");
    expect(turn.errors.length).toBeGreaterThan(0);
    expect(turn.process).toBe("main");
    expect(turn.spoken).toEqual([]);
    script.script("pipeline", pipelineAnswer({ monologue: "Hm.", dialogue: "Still here.", userModelCheck: false }));
    const next = await rig.say("Hello?");
    expect(next.spoken).toEqual(["Still here."]);
  });
});
