/**
 * `ensoul demo` on the offline model shows the architecture: the real binary, no keys, a
 * conversation typed line by line, in lines a person would type, walks every branch of
 * Claudius's graph by the offline model's documented rules (README "The offline model's
 * rules"): frustration in plain words takes him to `frustrated`, a request to focus to
 * `deepWork`, "that works now" back to `main`, a request for step-by-step work through the
 * problem-solving ISM and back; asked what she told him, he answers with her name; the name
 * reaches the user model in LMDB; and each of Kothar's whispers shows in the answer after it.
 *
 * Lines are typed one at a time. After a turn Kothar divines on (everyN: 2), the next line
 * waits for the whisper: a whisper landing while a turn runs is for the turn after, by design,
 * so piping every line at once would test the race rather than the effect.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { runEnsoul, startEnsoul } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs("ensoul-demo-graph-");
afterEach(() => dirs.cleanup());

const LINES = [
  "Hello!",
  "My name is Marta, and I restore old hand planes.",
  "I am really frustrated, this stupid code never works!",
  "Sorry. Let's focus and go deep on it.",
  "That works now, thanks.",
  "Can you walk me through flattening a plane sole, step by step?",
  "What did I tell you my name was?",
];
const EVERY_N = 2; // examples/demo.yaml: Kothar whispers every second exchange
const count = (text: string, pattern: RegExp) => text.match(new RegExp(pattern.source, "gm"))?.length ?? 0;
const WHISPER_NOTE = /^· Kothar whispers: (.*)$/;

/** The session's stdout cut into turns: the typed line, the notes and answers that followed it. */
function turnsOf(stdout: string): { line: string; out: string[] }[] {
  const turns: { line: string; out: string[] }[] = [];
  for (const l of stdout.split("\n")) {
    if (l.startsWith("you> ")) turns.push({ line: l.slice(5), out: [] });
    else turns.at(-1)?.out.push(l);
  }
  return turns;
}

describe("ensoul demo on the offline model shows the process graph", () => {
  it("greeting, main, frustrated, deepWork and the ISM from ordinary lines, the name recalled and in the user model, each whisper in the next answer", async () => {
    const data = dirs.make();
    const session = startEnsoul(["demo", "--data", data], { env: { USER: "tom" }, timeoutMs: 90_000 });
    for (const [i, line] of LINES.entries()) {
      session.type(line);
      await session.waitFor(new RegExp(`^· turn ${i + 1} done in `, "m"));
      if ((i + 1) % EVERY_N === 0 && i + 1 < LINES.length) {
        const whispers = (i + 1) / EVERY_N;
        await session.waitFor(new RegExp(`(?:^· Kothar whispers: .*\\n[\\s\\S]*){${whispers}}`, "m"));
        // The note is printed as the whisper goes out; give the soul a moment to store it.
        await sleep(300);
      }
    }
    session.child.stdin.end();
    const { code, stdout, stderr } = await session.exited;
    expect(stderr).not.toMatch(/Error|error:/);
    expect(code).toBe(0);

    const turns = turnsOf(stdout);
    expect(turns.map((t) => t.line)).toEqual(LINES);
    const answers = turns.map((t) => t.out.filter((l) => l.startsWith("Claudius: ")).map((l) => l.slice("Claudius: ".length)));
    // A chained turn that ends where it went is also reported as a self-transition: not a move.
    const moves = turns.map((t) => t.out.filter((l) => l.startsWith("· process: ") && !/^· process: (\S+) → \1$/.test(l)));
    for (const said of answers.flat()) expect(said).toMatch(/offline/);
    expect(moves).toEqual([
      ["· process: greeting → main"],
      [],
      // Frustration in plain words, on interaction 3 (main checks its soul state every third).
      ["· process: main → frustrated"],
      // Asked to focus and go deep, the frustrated Claudius turns focused: deepWork.
      ["· process: frustrated → deepWork"],
      // "That works now" finishes the task.
      ["· process: deepWork → main"],
      // A request for step-by-step work: main hands the same message to the ISM, which answers and hands back.
      ["· process: main → problemSolving", "· process: problemSolving → main"],
      [],
    ]);
    expect(answers[1]![0]).toMatch(/^Hello, Marta! /);
    expect(answers[2]![0]).toMatch(/^Marta, I can hear the frustration/);
    expect(answers[5]).toHaveLength(2);
    expect(answers[5]![0]).toMatch(/^Marta, I'll work through "Can you walk me through/);
    // Asked what she told him, he answers from what he recorded: her name, not an echo.
    expect(answers[6]).toHaveLength(1);
    expect(answers[6]![0]).toMatch(/^Marta, you told me your name is Marta\. /);
    expect(count(stdout, /^· turn \d+ done in /)).toBe(LINES.length);

    // Each whisper shows in the first answer after it, and only there.
    const whispered = turns.flatMap((t, i) => t.out.flatMap((l) => WHISPER_NOTE.exec(l)?.slice(1, 2).map((w) => ({ after: i, w })) ?? []));
    expect(whispered.map((x) => x.after)).toEqual([1, 3, 5]);
    for (const { after, w } of whispered) {
      const heard = w.replace(/\s*\(offline intuition\)$/, "");
      expect(answers[after + 1]!.join("\n")).toContain(`A hunch surfaces, and I follow it: ${heard}`);
      expect(answers.filter((a) => a.join("\n").includes(heard)).length).toBe(1);
    }
    expect(whispered[0]!.w).toContain("Marta");

    // The user model in LMDB: v1 from the greeting, v2 at interaction 6 with the name.
    const memory = await runEnsoul(["memory", "claudius", "--data", data, "--user", "tom", "--json"], { env: { USER: "tom" } });
    expect(memory.code).toBe(0);
    const report = JSON.parse(memory.stdout) as { history: { version: number; changeNote: string; markdown: string }[] };
    expect(report.history.map((v) => v.version)).toEqual([1, 2]);
    expect(report.history[1]!.markdown).toMatch(/^# Marta\n\n## Persona\nName: Marta\n/);
  }, 120_000);
});
