/**
 * ensoul as an npm package: `npm pack` of this checkout (which builds dist/ through `prepare`),
 * installed into an empty project, where a soul in plain JavaScript and one in TypeScript run
 * on the offline model importing only `ensoul` and its subpaths, the TypeScript one also
 * typechecks against the shipped .d.ts, and the `ensoul` command runs the built JavaScript.
 *
 * The tarball is built and installed once for the file. Without npm it is skipped with a
 * message, except in CI (any non-empty `CI`), where a skipped package test would pass a
 * package that was never installed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inCi } from "../../support/ci/inCi.ts";
import { repoRoot } from "../../support/cli/runEnsoul.ts";
import { installInEmptyProject, npmVersion, packEnsoul, run, type PackedTarball } from "../../support/package/packedEnsoul.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-pack-");
// Installed node_modules trees: removing them takes a while on a busy disk.
afterAll(() => dirs.cleanup(), 120_000);

/** README's example soul (the ```js block of "ensoul as a package"), run as written. */
const ADA_JS = readmeBlock("// ada.mjs");

/** The fenced block of README.md that starts with `firstLine`. */
function readmeBlock(firstLine: string): string {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const block = [...readme.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1] as string).find((b) => b.startsWith(`${firstLine}\n`));
  if (block === undefined) throw new Error(`README.md has no code block starting with ${firstLine}`);
  return block;
}

/**
 * The same soul in TypeScript, with types from the package: the \`@ts-expect-error\` lines
 * only typecheck when the shipped .d.ts really reach the user (were they missing, everything
 * would be \`any\` and the directives unused, which tsc reports).
 */
const ADA_TS = `import { createSoul, defineSoul, externalDialog, openStore, useActions, type MentalProcess, type Proposal } from "ensoul";
import { createOfflineModel, type LanguageModel } from "ensoul/providers";

const talking: MentalProcess = async ({ workingMemory }) => {
  const { speak } = useActions();
  const [memory, reply] = await externalDialog(workingMemory, "Greet the user warmly, by name.");
  const words: string = reply;
  speak(words);
  return memory;
};

/** Never called: what the compiler must refuse (it would throw if it ran). */
export function mistakes(): void {
  // @ts-expect-error: a soul needs a persona and its processes
  defineSoul({ name: "Nobody" });
  // @ts-expect-error: a cognitive step takes working memory, not a string
  void externalDialog("hello", "answer");
}

/** A subpath's types reach the user too. */
export const model: LanguageModel = createOfflineModel();

const ada = defineSoul({ name: "Ada", persona: "# Ada\\nA patient tutor.", initialProcess: talking, processes: { talking } });
const store = openStore({ path: process.argv[2] });
const soul = createSoul({ blueprint: ada, id: "ada", store });
soul.onSpeech((proposal: Proposal) => console.log(\`Ada: \${proposal.content}\`));
await soul.perceive({ action: "said", content: "Hi, I'm Bob.", name: "Bob" });
await soul.idle();
await soul.stop();
await store.close();
`;

/** Each subpath and one thing it must export; and a path behind the exports map. */
const SUBPATHS_MJS = `const wanted = {
  "ensoul": ["defineSoul", "createSoul", "WorkingMemory", "externalDialog", "useSoulMemory", "ismProcess", "createInProcessOutlet", "openStore"],
  "ensoul/node": ["startNode", "loadClusterConfig"],
  "ensoul/providers": ["createOfflineModel", "createAnthropicModel"],
  "ensoul/bus": ["createInProcessBus", "encodeEnvelope"],
  "ensoul/store": ["openStore"],
  "ensoul/gates": ["createGateChain", "bouncer"],
  "ensoul/bridges": ["startBridge"],
};
const found = {};
for (const [spec, names] of Object.entries(wanted)) {
  const mod = await import(spec);
  found[spec] = names.filter((n) => mod[n] !== undefined);
}
let deep;
try {
  await import("ensoul/actors/soul/index.js");
  deep = "imported";
} catch (e) {
  deep = e.code;
}
console.log(JSON.stringify({ found, deep }));
`;

/** Needs the package's types and node's; the compiler is this checkout's (the project installs none). */
const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    typeRoots: [join(repoRoot, "node_modules", "@types")],
    types: ["node"],
  },
  files: ["ada.ts"],
};

const npm = npmVersion();
const SUITE = "the npm package: npm pack, installed into an empty project";
const NO_NPM = "npm is not on the PATH, so the package cannot be packed or installed";
// In CI the suite runs anyway, and its beforeAll fails with the reason.
const skipped = npm === undefined && !inCi();
if (skipped) console.warn(`[skip] ${SUITE}: ${NO_NPM}`);

(skipped ? describe.skip : describe)(skipped ? `${SUITE} (skipped: ${NO_NPM})` : SUITE, () => {
  let tarball: PackedTarball;
  let project: string;

  beforeAll(async () => {
    if (npm === undefined) throw new Error(`${NO_NPM} (required in CI)`);
    tarball = await packEnsoul(dirs.make());
    project = dirs.make();
    await installInEmptyProject(project, tarball.path);
  }, 300_000);

  it("ships the built JavaScript, its types and what it reads at run time, and no sources or tests", () => {
    const files = tarball.files;
    for (const f of [
      "package.json",
      "README.md",
      "LICENSE",
      "bin/ensoul.js",
      "dist/api/index.js",
      "dist/api/index.d.ts",
      "dist/runtime/cli/main.js",
      "dist/souls/claudius/soul.md",
      "dist/examples/demo.yaml",
      "docs/PROTOCOL.md",
    ]) {
      expect(files, f).toContain(f);
    }
    const sources = files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
    expect(sources).toEqual([]);
    expect(files.filter((f) => f.startsWith("test/") || f.startsWith("scripts/"))).toEqual([]);
  });

  it("runs README's soul, written in plain JavaScript (ESM), on the offline model", async () => {
    writeFileSync(join(project, "ada.mjs"), ADA_JS);
    const r = await run(process.execPath, ["ada.mjs"], { cwd: project });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Ada: .*Bob/m);
    expect(r.stdout).toMatch(/offline/i);
  }, 60_000);

  it("runs a soul written in TypeScript with the tsx that ensoul brings, and it typechecks against the package's types", async () => {
    writeFileSync(join(project, "ada.ts"), ADA_TS);
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
    const ran = await run(process.execPath, ["--import", "tsx", "ada.ts", join(project, "data-ts")], { cwd: project });
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^Ada: .*Bob/m);

    const typed = await run(process.execPath, [join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", "."], { cwd: project });
    expect(typed.stdout + typed.stderr).toBe("");
    expect(typed.code).toBe(0);
  }, 90_000);

  it("exports each subpath of the exports map, and nothing behind it", async () => {
    writeFileSync(join(project, "subpaths.mjs"), SUBPATHS_MJS);
    const r = await run(process.execPath, ["subpaths.mjs"], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    const { found, deep } = JSON.parse(r.stdout) as { found: Record<string, string[]>; deep: string };
    expect(found).toEqual({
      ensoul: ["defineSoul", "createSoul", "WorkingMemory", "externalDialog", "useSoulMemory", "ismProcess", "createInProcessOutlet", "openStore"],
      "ensoul/node": ["startNode", "loadClusterConfig"],
      "ensoul/providers": ["createOfflineModel", "createAnthropicModel"],
      "ensoul/bus": ["createInProcessBus", "encodeEnvelope"],
      "ensoul/store": ["openStore"],
      "ensoul/gates": ["createGateChain", "bouncer"],
      "ensoul/bridges": ["startBridge"],
    });
    expect(deep).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED");
  }, 60_000);

  it("gives `npx ensoul`, which runs the built JavaScript: --help, and a chat with a builtin soul", async () => {
    // No sources in the package, so the bin can only be running dist/.
    expect(existsSync(join(project, "node_modules", "ensoul", "runtime"))).toBe(false);
    const help = await run("npx", ["ensoul", "--help"], { cwd: project });
    expect(help.stderr).toBe("");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: ensoul /m);
    for (const command of ["up", "demo", "chat", "memory"]) expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));

    // The soul's soul.md is read from dist/, beside its compiled module.
    const chat = await run("npx", ["ensoul", "chat", "samantha", "--data", join(project, "data-chat"), "--as", "Bob"], {
      cwd: project,
      input: "Hello, I am Bob\n",
    });
    expect(chat.stderr).toBe("");
    expect(chat.code).toBe(0);
    expect(chat.stdout).toMatch(/^Samantha: .*Bob/m);
  }, 90_000);

  it("runs README's \"Writing a soul\" as written: the soul saved as souls/ada/index.ts, then npx ensoul chat ./souls/ada", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Writing a soul"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toContain('from "ensoul"');
    mkdirSync(join(project, "souls", "ada"), { recursive: true });
    writeFileSync(join(project, "souls", "ada", "index.ts"), code as string);
    const chat = await run("npx", ["ensoul", "chat", "./souls/ada", "--data", join(project, "data-ada"), "--as", "Bob"], { cwd: project, input: "What is a soul?\n" });
    expect(chat.stderr).toBe("");
    expect(chat.code).toBe(0);
    expect(chat.stdout).toMatch(/^Ada: \S/m);
  }, 90_000);

  it("scaffolds a soul project with `npx ensoul init`, in which npm install, npm start and npm test work offline", async () => {
    const parent = dirs.make();
    // As the issue says it: in an empty directory, the packed ensoul's own `init`.
    writeFileSync(join(parent, "package.json"), '{ "name": "scratch", "private": true }\n');
    expect((await run("npm", ["install", tarball.path, "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: parent, timeoutMs: 240_000 })).code).toBe(0);
    const init = await run("npx", ["ensoul", "init", "mysoul", "--ensoul", tarball.path], { cwd: parent });
    expect(init.stderr).toBe("");
    expect(init.code).toBe(0);
    expect(init.stdout).toContain("npm start");
    const soul = join(parent, "mysoul");
    for (const file of ["package.json", "ensoul.yaml", "README.md", "souls/mysoul/soul.md", "souls/mysoul/index.ts", "souls/mysoul/greeting.ts", "souls/mysoul/conversation.ts", "souls/mysoul/solving.ts", "test/mysoul.test.ts"]) {
      expect(existsSync(join(soul, file)), file).toBe(true);
    }
    const install = await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: soul, timeoutMs: 240_000 });
    expect(install.code, install.stderr).toBe(0);
    const start = await run("npm", ["start", "--silent"], { cwd: soul, input: "Hello there\n", timeoutMs: 90_000 });
    expect(start.stderr).toBe("");
    expect(start.code).toBe(0);
    expect(start.stdout).toMatch(/^Mysoul: \S/m);
    const test = await run("npm", ["test", "--silent"], { cwd: soul, timeoutMs: 120_000 });
    expect(test.code, `${test.stdout}\n${test.stderr}`).toBe(0);
    expect(test.stdout).toMatch(/1 passed/);
    // ensoul init refuses to write into a project that is already there.
    const again = await run("npx", ["ensoul", "init", "mysoul"], { cwd: parent });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/mysoul exists and is not empty/);
  }, 420_000);
});
