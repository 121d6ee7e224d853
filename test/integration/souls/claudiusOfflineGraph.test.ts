/**
 * Claudius's process graph on the offline model alone (no key, the embedded default): a
 * conversation a newcomer might have with the demo takes him greeting -> main -> frustrated
 * -> main -> problemSolving (the ISM: think, recall, respond) -> main, the name they give
 * reaches the user model and the answers, and a daimon's whisper shows in the next answer.
 * Twice, from scratch: the offline model is deterministic, so both runs say the same. And one
 * conversation in lines a person would type walks every branch by the offline model's
 * documented rules (README "The offline model's rules"), deepWork both ways in, and answers a
 * question about what it was told from what it recorded.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createDefaultRegistry, defaultModelName } from "../../../runtime/providers/index.ts";
import { userModels } from "../../../runtime/store/index.ts";
import { claudius } from "../../../souls/claudius/index.ts";
import { startClaudiusRig, type ClaudiusRig, type TurnReport } from "../../support/souls/claudiusRig.ts";

const rigs: ClaudiusRig[] = [];
afterEach(async () => {
  for (const rig of rigs.splice(0)) await rig.close();
});

async function offlineClaudius(): Promise<ClaudiusRig> {
  const env = {}; // no ANTHROPIC_API_KEY, no GROQ_API_KEY
  const rig = await startClaudiusRig({ blueprint: () => claudius, cognition: { registry: createDefaultRegistry(env), defaultModel: defaultModelName(env) } });
  rigs.push(rig);
  return rig;
}

const WHISPER = "Their patience is fraying: fewer words, and own the miss. (offline intuition)";

/** The demo's arc, turn by turn, with what each turn must show. */
async function demoArc(rig: ClaudiusRig): Promise<TurnReport[]> {
  const say = async (text: string) => {
    const turn = await rig.say(text, "tom");
    expect(turn.errors, text).toEqual([]);
    return turn;
  };
  const hello = await say("Hello!");
  expect(hello.transitions).toEqual(["greeting->main"]);

  const named = await say("My name is Marta.");
  expect(named).toMatchObject({ process: "main", transitions: [] });
  expect(named.spoken[0]).toMatch(/^Hello, Marta! /);

  // Interaction 3 checks the soul state: the frustration is read, and main hands over.
  const angry = await say("THIS IS USELESS, I HATE IT!");
  expect(angry).toMatchObject({ process: "frustrated", transitions: ["main->frustrated"] });
  expect(angry.spoken[0]).toMatch(/^Marta, I can hear the frustration/);
  expect(rig.soul().memory().soulMemory).toMatchObject({ emotionalState: "frustrated", currentProcess: "frustrated" });

  // A whisper waits in soul memory for the next turn, which follows it.
  await rig.soul().whisper(WHISPER, "Kothar");
  const calm = await say("ok, sorry. I am calm now.");
  expect(calm).toMatchObject({ process: "main", transitions: ["frustrated->main"] });
  expect(calm.spoken[0]).toContain("A hunch surfaces, and I follow it: Their patience is fraying: fewer words, and own the miss.");
  expect(rig.soul().memory().soulMemory["daimonicWhisper"] ?? null).toBeNull();

  const problem = await say("My build fails with error TS2307: cannot find module ./util.js. How do I fix it?");
  expect(problem).toMatchObject({ process: "main", transitions: ["main=>problemSolving", "problemSolving->main"] });
  expect(problem.spoken).toHaveLength(2);
  expect(problem.spoken[0]).toMatch(/^Marta, I'll work through "My build fails/);
  expect(problem.spoken[1]).toContain("read the first error, not the last");
  // The ISM thought and recalled before it responded: its monologues are in memory.
  const ism = rig.soul().memory().workingMemory.memories.map((m) => m.content);
  expect(ism.some((c) => c.startsWith("Claudius pondered: "))).toBe(true);
  expect(ism.some((c) => c.startsWith("Claudius recalled: "))).toBe(true);

  // Interaction 6: the user-model update is due again, and the name her message gave is in it.
  const thanks = await say("Thanks, that helps.");
  expect(thanks).toMatchObject({ process: "main", transitions: [] });
  const history = userModels(rig.store(), "claudius").forUser("tom").history();
  expect(history.map((v) => v.version)).toEqual([1, 2]);
  expect(history[0]!.markdown).not.toContain("Marta");
  expect(history[1]!.markdown).toMatch(/^# Marta\n\n## Persona\nName: Marta\n/);
  expect(history[1]!.changeNote).toContain("Learned their name: Marta");
  return [hello, named, angry, calm, problem, thanks];
}

describe("Claudius's process graph on the offline model", () => {
  it("goes frustrated and back, through the ISM and back, keeps the name and follows a whisper; the same again from scratch", async () => {
    const first = await demoArc(await offlineClaudius());
    const second = await demoArc(await offlineClaudius());
    expect(second.map((t) => t.spoken)).toEqual(first.map((t) => t.spoken));
    for (const turn of first) for (const line of turn.spoken) expect(line).toMatch(/offline/);
  }, 60_000);

  it("turns frustrated at the next soul-state check when the outburst came on a turn without one", async () => {
    const rig = await offlineClaudius();
    await rig.say("Hi there.", "tom");
    expect((await rig.say("stop, this is pointless", "tom")).process).toBe("main");
    expect(await rig.say("hello?", "tom")).toMatchObject({ process: "frustrated", transitions: ["main->frustrated"] });
    expect(await rig.say("what about the plane iron?", "tom")).toMatchObject({ process: "main", transitions: ["frustrated->main"] });
  }, 30_000);

  it("walks greeting, main, frustrated, deepWork and the ISM from ordinary lines, and answers what it was told", async () => {
    const rig = await offlineClaudius();
    const walk: [line: string, transitions: string[]][] = [
      ["Hi, I'm Marta.", ["greeting->main"]],
      ["I restore old hand planes.", []],
      ["Mostly Stanley No. 4s.", []],
      // Interaction 4, between main's soul-state checks (3, 6, ...): the check at 6 still sees it.
      ["I am really frustrated, this stupid code never works!", []],
      ["Why is the sky blue?", []],
      ["Hmm.", ["main->frustrated"]],
      ["Sorry. Let's focus and go deep on the plane's frog.", ["frustrated->deepWork"]],
      ["That works now, thanks.", ["deepWork->main"]],
      ["Can you walk me through flattening the sole, step by step?", ["main=>problemSolving", "problemSolving->main"]],
      ["Let's focus and go deep on tuning the chipbreaker.", ["main=>problemSolving", "problemSolving=>deepWork"]],
      ["Done, thanks.", ["deepWork->main"]],
      ["What did I tell you my name was?", []],
    ];
    const turns: TurnReport[] = [];
    for (const [line, transitions] of walk) {
      const turn = await rig.say(line, "marta");
      expect(turn.errors, line).toEqual([]);
      expect(turn.transitions, line).toEqual(transitions);
      expect(turn.spoken.length, line).toBeGreaterThan(0);
      for (const said of turn.spoken) expect(said, line).toMatch(/offline/);
      turns.push(turn);
    }
    // The careful request: main's one sentence, then the ISM's worked answer.
    expect(turns[8]!.spoken).toHaveLength(2);
    // Asked what she told him, he answers with the name he recorded, not an echo.
    expect(turns[11]!.spoken.join("\n")).toMatch(/^Marta, you told me your name is Marta\./);
  }, 30_000);
});
