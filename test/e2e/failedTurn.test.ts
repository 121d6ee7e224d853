/**
 * A turn that fails is told where the person is, with the real `ensoul` binary: a soul whose
 * process hands over to a process it does not declare, and one whose code throws. `ensoul chat`
 * prints each reason in one line (for the exception, the file and line in the soul's own
 * source), its log at `--log-level debug` has every turn and the failures, and `ensoul memory`
 * lists the failed perceptions with their reasons and attempts.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { afterAll, expect, it } from "vitest";
import { repoRoot } from "../support/cluster/cliProcess.ts";
import { runEnsoul } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs("ensoul-failed-turn-");
afterAll(() => dirs.cleanup());

const soulApi = JSON.stringify(pathToFileURL(join(repoRoot, "actors/soul/index.ts")).href);

/** `bye` hands over to `farewell`, which `conversation` does not declare; `boom` throws on line 7. */
const CONVERSATION = `import { useActions, usePerceptions, type MentalProcess } from ${soulApi};
export const conversation: MentalProcess = async ({ workingMemory }) => {
  const text = usePerceptions().invokingPerception.content;
  if (text === "bye") return [workingMemory, "farewell"];
  if (text === "boom") {
    const settings: { voice?: { pitch: number } } = {};
    return settings.voice!.pitch as never;
  }
  useActions().speak(\`heard: \${text}\`);
  return workingMemory;
};
`;

const INDEX = `import { defineSoul, type MentalProcess } from ${soulApi};
import { conversation } from "./conversation.ts";
const solving: MentalProcess = async ({ workingMemory }) => workingMemory;
const farewell: MentalProcess = async ({ workingMemory }) => workingMemory;
export default defineSoul({
  name: "Fa",
  persona: "Fa.",
  initialProcess: conversation,
  processes: { conversation: { process: conversation, next: ["solving"] }, solving, farewell },
});
`;

const UNDECLARED = "process 'conversation' handed over to 'farewell', which it does not declare as a successor (declared: solving); the soul stays in 'conversation'";
const THROWN = "TypeError: Cannot read properties of undefined (reading 'pitch') at souls/fa/conversation.ts:7:28";

/** The soul folder as a user writes it, in `dir`. */
function writeSoul(dir: string): void {
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  mkdirSync(join(dir, "souls", "fa"), { recursive: true });
  writeFileSync(join(dir, "souls", "fa", "conversation.ts"), CONVERSATION);
  writeFileSync(join(dir, "souls", "fa", "index.ts"), INDEX);
}

it("ensoul chat prints why a turn failed in one line, its debug log has it, and ensoul memory lists the failed perceptions with their reasons", async () => {
  const dir = dirs.make();
  writeSoul(dir);
  const data = join(dir, "data");

  const chat = await runEnsoul(["--log-level", "debug", "chat", "./souls/fa", "--as", "Ada", "--data", data], { cwd: dir, lines: ["hello", "bye", "boom", "still there?"], timeoutMs: 60_000 });
  expect(chat.code, chat.stderr).toBe(0);
  const said = chat.stdout.split("\n").filter((l) => /^(you>|Fa:|!)/.test(l));
  expect(said).toEqual([
    "you> hello",
    "Fa: heard: hello",
    "you> bye",
    `! Fa could not answer: ${UNDECLARED}`,
    "you> boom",
    `! Fa could not answer: ${THROWN}`,
    "you> still there?",
    "Fa: heard: still there?",
  ]);
  // The log (JSON lines on a pipe): every turn at debug, each failure a warning with its reason.
  const log = chat.stderr.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { level: string; msg: string; perception?: string });
  expect(log.filter((l) => l.level === "debug" && /^soul fa: turn \d+ done in conversation$/.test(l.msg))).toHaveLength(2);
  expect(log.filter((l) => l.level === "warn").map((l) => l.msg)).toEqual([`soul fa: process failed in conversation: ${UNDECLARED}`, `soul fa: process failed in conversation: ${THROWN}`]);
  const failedIds = log.filter((l) => l.level === "warn").map((l) => l.perception);

  const memory = await runEnsoul(["memory", "fa", "--data", data], { cwd: dir, timeoutMs: 60_000 });
  expect(memory.code, memory.stderr).toBe(0);
  const lines = memory.stdout.split("\n");
  expect(lines[0]).toMatch(/inbox 0 pending, 2 failed$/);
  const listed = lines.slice(lines.indexOf("failed perceptions (2):") + 1, lines.indexOf("failed perceptions (2):") + 5);
  expect(listed).toEqual([
    expect.stringMatching(new RegExp(`^  \\S+Z · ${failedIds[0]} · Ada said: "bye" · 1 attempt$`)),
    `    ${UNDECLARED}`,
    expect.stringMatching(new RegExp(`^  \\S+Z · ${failedIds[1]} · Ada said: "boom" · 1 attempt$`)),
    `    ${THROWN}`,
  ]);
}, 150_000);

it("names the TypeScript line of a soul built to JavaScript by esbuild, through its source map", async () => {
  const dir = dirs.make();
  writeSoul(dir);
  // Bundled with its map beside it; ensoul's own modules stay imports (as a package's would).
  await build({
    entryPoints: [join(dir, "souls", "fa", "index.ts")],
    outfile: join(dir, "dist", "fa.mjs"),
    bundle: true,
    format: "esm",
    platform: "node",
    sourcemap: true,
    logLevel: "silent",
    plugins: [{ name: "ensoul-external", setup: (b) => void b.onResolve({ filter: /^file:/ }, (a) => ({ path: a.path, external: true })) }],
  });
  const chat = await runEnsoul(["chat", "./dist/fa.mjs", "--as", "Ada", "--data", join(dir, "data")], { cwd: dir, lines: ["boom"], timeoutMs: 60_000 });
  expect(chat.code, chat.stderr).toBe(0);
  expect(chat.stdout).toContain(`! Fa could not answer: ${THROWN}\n`);
}, 90_000);
