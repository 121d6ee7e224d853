/**
 * `npm start` as scripts and CI run it: the start script's own command (the real `ensoul`
 * binary in a child process), stdin piped, LMDB in a temp directory, no keys, so the demo
 * cluster (Claudius, Kothar whispering, the built-in gates) runs on the offline model.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ensoulBin, repoRoot as root, runEnsoul, type RunResult } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const startScript = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start;
/** `node ./bin/ensoul.js demo` -> the binary and its arguments, so the test runs exactly what `npm start` runs. */
const [, binArg, ...startArgs] = startScript.split(/\s+/);
const bin = join(root, binArg!);

const SECRET = "sk-ant-api03-Zq7xW2pLm9Kd4Rt8Vb3Nc6Hs1Jf5Gy0Ue2Ia7Ow4Xq9Pl3Mk8Nj6Bh5Vg-QZ12AbCd";

function runStart(lines: string[], args: string[]): Promise<RunResult> {
  return run([...startArgs, ...args], lines);
}

function run(args: string[], lines: string[] = []): Promise<RunResult> {
  // The start script's binary is the one runEnsoul runs (checked in the first test).
  return runEnsoul(args, { lines, env: { USER: "tom" } });
}

const dirs = tempDirs("ensoul-demo-");
const tempData = () => dirs.make();
afterEach(() => dirs.cleanup());

describe("npm start: the demo cluster with piped stdin", () => {
  it("answers each line as Claudius, shows Kothar's whispers and process changes, and exits 0 at end of input", async () => {
    expect(startArgs[0]).toBe("demo");
    expect(bin).toBe(ensoulBin);
    const data = tempData();
    const lines = ["Hello, I'm Tom.", "I restore hand planes.", "Mostly Stanley No. 4s.", "What should I sharpen first?"];
    const result = await runStart(lines, ["--data", data, "--user", "Tom"]);
    expect(result.stderr).not.toMatch(/Error|error:/);
    expect(result.code).toBe(0);
    const out = result.stdout.split("\n");
    expect(out[0]).toMatch(/^ensoul demo · Claudius · offline:echo \(the offline model: no ANTHROPIC_API_KEY or GROQ_API_KEY is set\)$/);
    expect(result.stdout).toContain("gates: bouncer, length, budget");
    // Each line echoed, then answered, in order.
    expect(out.filter((l) => l.startsWith("you> "))).toEqual(lines.map((l) => `you> ${l}`));
    const answers = out.filter((l) => l.startsWith("Claudius: "));
    expect(answers).toHaveLength(lines.length);
    for (let i = 0; i < lines.length; i++) {
      const at = out.indexOf(`you> ${lines[i]}`);
      const next = i + 1 < lines.length ? out.indexOf(`you> ${lines[i + 1]}`) : out.length;
      expect(out.slice(at, next).filter((l) => l.startsWith("Claudius: "))).toHaveLength(1);
    }
    // Status notes, clearly prefixed: Kothar whispered (everyN: 2), Claudius left greeting.
    expect(out.some((l) => l.startsWith("· kothar whispers: ") || l.startsWith("· Kothar whispers: "))).toBe(true);
    expect(out).toContain("· process: greeting → main");
    expect(out.filter((l) => /^· turn \d+ done in /.test(l))).toHaveLength(lines.length);
    expect(out.at(-2)).toMatch(/^ensoul demo: stopped; 4 turn\(s\) this session, all committed turns persisted in /);
    expect(result.stdout + result.stderr).not.toMatch(/sk-ant-|gsk_/);

    // Every committed turn persisted: a second run continues from turn 4.
    const again = await runStart(["Back again."], ["--data", data, "--user", "Tom"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("· turn 5 done in main");
  }, 90_000);

  it("never prints a secret the user typed, even though the offline model echoes it", async () => {
    const data = tempData();
    const result = await runStart(["Hi, I'm Tom.", `my key is ${SECRET}`, "thanks"], ["--data", data, "--user", "Tom"]);
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n").filter((l) => l.startsWith("you> "))).toHaveLength(3);
    // The bouncer stops the echo: the line that would carry it is blocked, with a note saying so.
    expect(result.stdout).toMatch(/! Claudius's speak was intercepted: bouncer: .*Anthropic API key/);
    const withoutInput = result.stdout.split("\n").filter((l) => !l.startsWith("you> ")).join("\n");
    expect(withoutInput).not.toContain(SECRET);
    expect(withoutInput).not.toContain("sk-ant-api03");
    expect(result.stderr).not.toContain(SECRET);
  }, 90_000);

  it("`ensoul memory claudius --user` shows the user-model history the demo kept in LMDB, and `--export` writes it as markdown", async () => {
    const data = tempData();
    expect((await runStart(["Hello, I'm Tom.", "I restore hand planes."], ["--data", data, "--user", "Tom"])).code).toBe(0);
    // The node's <data>/<node> layout, found from --data...
    const shown = await run(["memory", "claudius", "--data", data, "--user", "Tom"]);
    expect(shown.stderr).toBe("");
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split("\n");
    expect(lines[0]).toMatch(/^user model of 'Tom' kept by claudius on node local: \d+ version\(s\)$/);
    expect(lines[1]).toMatch(/^ {2}v1 · \d{4}-\d\d-\d\dT[\d:.]+Z · \S/);
    expect(shown.stdout).toContain("## Most Potent Memories");
    // ...and the environment directory itself.
    const direct = await run(["memory", "claudius", "--data", join(data, "local"), "--user", "Tom", "--json"]);
    const report = JSON.parse(direct.stdout) as { history: { version: number; changeNote: string; markdown: string }[] };
    expect(report.history[0]).toMatchObject({ version: 1 });
    expect(report.history[0]!.changeNote).not.toBe("");
    const unknown = await run(["memory", "claudius", "--data", data, "--user", "Nobody"]);
    expect(unknown.stdout).toContain("has no model of user 'Nobody' (users with a model: Tom)");

    const dir = join(data, "export");
    const exported = await run(["memory", "claudius", "--data", data, "--export", dir]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain("exported 2 file(s) for 1 user(s) of claudius:");
    expect(existsSync(join(dir, "Tom.md"))).toBe(true);
    expect(readFileSync(join(dir, "Tom.history.md"), "utf8")).toMatch(/^# User model history: Tom\n\n## Version 1 — .*\n\nChange note: /);
  }, 90_000);
});
