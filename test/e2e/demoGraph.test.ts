/**
 * `ensoul demo` on the offline model shows the architecture: the real binary, no keys, a
 * conversation typed line by line. Frustration takes Claudius to `frustrated` and calm talk
 * back to `main`; a failing build takes him through the problem-solving ISM and back; the
 * name given reaches the answers and the user model in LMDB; and each of Kothar's whispers
 * shows in the answer after it.
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
  "My name is Marta.",
  "THIS IS USELESS, I HATE IT!",
  "ok, sorry. I am calm now.",
  "My build fails with error TS2307: cannot find module ./util.js. How do I fix it?",
  "Thanks, that helps.",
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
  it("frustrated and back, the ISM and back, the name in answers and user model, each whisper in the next answer", async () => {
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
    const notes = turns.map((t) => t.out.filter((l) => l.startsWith("· process: ")));
    for (const said of answers.flat()) expect(said).toMatch(/offline/);

    // The name, in the answer to it and after.
    expect(answers[1]![0]).toMatch(/^Hello, Marta! /);
    // Frustration: main -> frustrated (interaction 3 checks the soul state), and back on calm talk.
    expect(notes[2]).toEqual(["· process: main → frustrated"]);
    expect(answers[2]![0]).toMatch(/^Marta, I can hear the frustration/);
    expect(notes[3]).toEqual(["· process: frustrated → main"]);
    // The failing build: main hands the same message to the ISM, which answers and hands back.
    expect(notes[4]).toEqual(["· process: main → problemSolving", "· process: problemSolving → main"]);
    expect(answers[4]).toHaveLength(2);
    expect(answers[4]![0]).toMatch(/^Marta, I'll work through "My build fails/);
    expect(answers[4]![1]).toContain("read the first error, not the last");
    expect(count(stdout, /^· turn \d+ done in /)).toBe(LINES.length);

    // Each whisper shows in the first answer after it, and only there.
    const whispered = turns.flatMap((t, i) => t.out.flatMap((l) => WHISPER_NOTE.exec(l)?.slice(1, 2).map((w) => ({ after: i, w })) ?? []));
    expect(whispered.map((x) => x.after)).toEqual([1, 3, 5]);
    for (const { after, w } of whispered.slice(0, -1)) {
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
