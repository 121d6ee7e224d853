/**
 * What `ensoul dev`, `chat` and `up` say when a soul's code does not load
 * (runtime/node/soulLoadError.ts): a syntax error with its file, line, column and message on
 * one line, and below it the source line as esbuild reports it; anything else as before, its
 * first line. The errors are real: esbuild's TransformError as tsx throws it (tsx compiles with
 * esbuild and passes its error on), and Node's own SyntaxError, which names no place.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { transformSync } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { describeLoadError } from "../../../runtime/node/soulLoadError.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-load-error-");
afterAll(() => dirs.cleanup());

/** What tsx throws for a file it cannot compile: esbuild's own error, the file named by its absolute path. */
function tsxError(file: string, source: string): Error {
  try {
    transformSync(source, { loader: "ts", sourcefile: file, logLevel: "silent" });
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a syntax error");
}

describe("a soul module that does not load", () => {
  it("shows a TypeScript syntax error's file, line, column, message and source line, relative to the working directory", async () => {
    const dir = dirs.make();
    mkdirSync(join(dir, "souls", "ada"), { recursive: true });
    const file = join(dir, "souls", "ada", "listening.ts");
    const source = "export const listening = async () => {\n  const x = 1;\n  this is not code\n};\n";
    writeFileSync(file, source);
    const err = tsxError(file, source);
    expect(err.message).toMatch(/^Transform failed with 1 error:\n/);

    const problem = await describeLoadError(err, join(dir, "souls", "ada", "index.ts"), dir);
    expect(problem.summary).toBe('souls/ada/listening.ts:3:7: Expected ";" but found "is"');
    expect(problem.detail).toContain('✘ [ERROR] Expected ";" but found "is"');
    expect(problem.detail).toMatch(/souls\/ada\/listening\.ts:3:7:\n\s+3 │ {3}this is not code\n\s+│ {8}~~\n/);
  });

  it("finds a JavaScript syntax error Node reports without a place, in the entry module", async () => {
    const dir = dirs.make();
    const file = join(dir, "broken.mjs");
    writeFileSync(file, "const a = 1;\nexport default {{ not javascript\n");
    const err = new SyntaxError("Unexpected token '{'");
    const problem = await describeLoadError(err, file, dir);
    expect(problem.summary).toBe('broken.mjs:2:16: Expected identifier but found "{"');
    expect(problem.detail).toMatch(/broken\.mjs:2:16:\n\s+2 │ export default \{\{ not javascript\n/);
  });

  it("keeps tsx's own lines, with their source line, when esbuild finds nothing in the file now", async () => {
    const dir = dirs.make();
    const file = join(dir, "gone.ts");
    writeFileSync(file, "export const fine = 1;\n");
    const err = new Error(`Transform failed with 1 error:\n${file}:1:7: ERROR: Something esbuild said then`);
    const problem = await describeLoadError(err, file, dir);
    expect(problem.summary).toBe("gone.ts:1:7: Something esbuild said then");
    expect(problem.detail).toMatch(/gone\.ts:1:7:\n\s+1 │ export const fine = 1;\n/);
  });

  it("says anything else as its first line, with nothing below it", async () => {
    const dir = dirs.make();
    const file = join(dir, "fine.mjs");
    writeFileSync(file, "export default 1;\n");
    const missing = await describeLoadError(new Error("Cannot find package 'nope' imported from /x/fine.mjs\nmore"), file, dir);
    expect(missing).toEqual({ summary: "Cannot find package 'nope' imported from /x/fine.mjs" });
    // A SyntaxError the soul's own code threw while loading (JSON.parse), not a parse of its source.
    const thrown = await describeLoadError(new SyntaxError("Unexpected token } in JSON at position 3"), file, dir);
    expect(thrown).toEqual({ summary: "Unexpected token } in JSON at position 3" });
  });
});
