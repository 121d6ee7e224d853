/**
 * ensoul as a user gets it from npm: `npm pack` of this checkout, installed into an empty
 * project. The pack runs in a copy of the repository (its node_modules linked, not copied),
 * so the test never writes dist/ or a tarball into the working tree another test or a
 * developer is using; `npm pack` runs the `prepare` script there, so the tarball holds what
 * `npm run build` makes from the sources as they are now.
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../cli/runEnsoul.ts";

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Not copied into the staging copy: installed or built things, and local state. */
const NOT_STAGED = new Set(["node_modules", ".git", "dist", ".ensoul", "coverage", ".prof", "tmp"]);

/**
 * The environment of every command here: the caller's, without model keys (the souls must run
 * on the offline model) and without the `npm_*` variables of an enclosing `npm test`, which
 * would point a nested npm at this repository (`npm_config_local_prefix`).
 */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("npm_") || k.startsWith("ENSOUL_") || k === "ANTHROPIC_API_KEY" || k === "GROQ_API_KEY") continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/** npm's version, or undefined when there is no npm on the PATH. */
export function npmVersion(): string | undefined {
  const r = spawnSync("npm", ["--version"], { encoding: "utf8", env: cleanEnv() });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** Runs a command to its end; rejects only if it cannot start. A command past `timeoutMs` is killed. */
export function run(command: string, args: string[], opts: { cwd: string; input?: string; timeoutMs?: number }): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: cleanEnv(), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdin.on("error", () => undefined);
    child.stdin.end(opts.input ?? "");
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A failed step of the setup, with everything it printed: npm's errors are the explanation. */
function expectSuccess(what: string, r: CommandResult): CommandResult {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

export interface PackedTarball {
  /** Absolute path of the .tgz. */
  path: string;
  /** The paths inside the package, as `npm pack --json` lists them. */
  files: string[];
}

/** `npm pack` of a copy of this checkout into `dir`. */
export async function packEnsoul(dir: string): Promise<PackedTarball> {
  const stage = join(dir, "ensoul");
  mkdirSync(stage);
  for (const entry of readdirSync(repoRoot)) {
    if (!NOT_STAGED.has(entry)) cpSync(join(repoRoot, entry), join(stage, entry), { recursive: true });
  }
  // The build needs the compiler and the types; npm never packs node_modules.
  symlinkSync(join(repoRoot, "node_modules"), join(stage, "node_modules"), "dir");
  const packed = expectSuccess("npm pack", await run("npm", ["pack", "--json", "--pack-destination", dir], { cwd: stage, timeoutMs: 180_000 }));
  // `prepare`'s output (the build) comes before the JSON on stdout.
  const json = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("[\n"))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const [info] = json;
  if (!info) throw new Error(`npm pack printed no package:\n${packed.stdout}`);
  return { path: join(dir, info.filename), files: info.files.map((f) => f.path) };
}

/**
 * An empty ESM project in `dir` with the tarball installed, from npm's cache where it can
 * (its dependencies still resolve against the registry when the cache lacks one).
 */
export async function installInEmptyProject(dir: string, tarball: string): Promise<void> {
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "my-soul", private: true, type: "module" }, null, 2));
  expectSuccess(
    "npm install of the tarball",
    await run("npm", ["install", tarball, "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, timeoutMs: 240_000 }),
  );
}
