/**
 * The strict TypeScript check, as part of the suite: CI runs the tests, and a type error in
 * any folder (including code no test imports) must fail it.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");

it("the whole project typechecks under strict settings (npm run typecheck)", async () => {
  const result = await promisify(execFile)(process.execPath, [tsc, "--noEmit", "-p", root], { cwd: root }).then(
    ({ stdout }) => ({ code: 0, output: stdout }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? 1, output: `${e.stdout ?? ""}${e.stderr ?? ""}` }),
  );
  expect(result.output.trim()).toBe("");
  expect(result.code).toBe(0);
}, 120_000);
