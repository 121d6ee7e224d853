/**
 * Why a module of a soul (or a config's tool) does not load, told so that a person can fix it:
 * a syntax error with its file, line, column and message on one line, then the source line as
 * esbuild reports it. tsx compiles TypeScript with esbuild but keeps only
 * `Transform failed with 1 error:` and `<file>:<line>:<column>: ERROR: <text>` in its message,
 * and Node's own parser of JavaScript names no place at all, so the file is parsed again here
 * with esbuild, which gives the whole message (the source line, the suggestion).
 */
import { existsSync, readFileSync } from "node:fs";
import { extname, resolve } from "node:path";
import type { Loader, PartialMessage } from "esbuild";
import { shownPath } from "../../actors/soul/index.ts";

/** esbuild is loaded only when a module failed: every command imports this folder, few ever need it. */
type Esbuild = typeof import("esbuild");

export interface LoadProblem {
  /** One line: `<file>:<line>:<column>: <message>` for a syntax error, else the error's first line. */
  summary: string;
  /** esbuild's report of each syntax error (the source line, a caret, a suggestion), when there is one. */
  detail?: string;
}

/** esbuild's own line in a TransformError's message: `<file>:<line>:<column>: ERROR: <text>`. */
const LOCATED = /^(.+?):(\d+):(\d+): ERROR: (.*)$/gm;

/** `err` is what importing `entry` threw; paths are shown relative to `cwd` when inside it. */
export async function describeLoadError(err: unknown, entry: string, cwd = process.cwd()): Promise<LoadProblem> {
  const message = err instanceof Error ? err.message : String(err);
  const firstLine = message.split("\n")[0] ?? "";
  const located = [...message.matchAll(LOCATED)].map((m) => ({ file: m[1]!, line: Number(m[2]), column: Number(m[3]), text: m[4]! }));
  if (located.length === 0 && (err as Error | undefined)?.name !== "SyntaxError") return { summary: firstLine };
  const esbuild = await import("esbuild");
  const messages = syntaxErrorsOf(esbuild, located, entry, cwd);
  if (messages.length === 0) return { summary: firstLine };
  const first = messages[0]!;
  const where = first.location ? `${first.location.file}:${first.location.line}:${first.location.column}: ` : "";
  const more = messages.length > 1 ? ` (and ${messages.length - 1} more)` : "";
  return { summary: `${where}${first.text}${more}`, detail: esbuild.formatMessagesSync(messages, { kind: "error", color: false, terminalWidth: 120 }).join("").trimEnd() };
}

/** A syntax error as tsx's message gives it. */
interface TsxLine {
  file: string;
  line: number;
  column: number;
  text: string;
}

/** The syntax errors behind the failure, located; none when esbuild finds none where it looks. */
function syntaxErrorsOf(esbuild: Esbuild, located: TsxLine[], entry: string, cwd: string): PartialMessage[] {
  if (located.length > 0) {
    const files = [...new Set(located.map((l) => l.file))];
    // esbuild again, for the whole messages; if it sees nothing (another version), the lines tsx gave, with their source line.
    return files.flatMap((file) => {
      const again = parseErrors(esbuild, resolve(cwd, file), cwd);
      return again.length > 0 ? again : located.filter((l) => l.file === file).map((l) => lineMessage(l, cwd));
    });
  }
  // Node's parser (a SyntaxError) names no file: the entry is the one file known; another is not found.
  return parseErrors(esbuild, entry, cwd);
}

function loaderOf(file: string): Loader {
  const ext = extname(file);
  if ([".ts", ".mts", ".cts"].includes(ext)) return "ts";
  if (ext === ".tsx") return "tsx";
  if (ext === ".jsx") return "jsx";
  return "js";
}

/** esbuild's syntax errors of a file (none when it parses, or cannot be read). */
function parseErrors(esbuild: Esbuild, file: string, cwd: string): PartialMessage[] {
  if (!existsSync(file)) return [];
  try {
    esbuild.transformSync(readFileSync(file, "utf8"), { loader: loaderOf(file), sourcefile: shownPath(file, cwd), logLevel: "silent" });
    return [];
  } catch (err) {
    const errors = (err as { errors?: PartialMessage[] }).errors;
    return Array.isArray(errors) ? errors : [];
  }
}

/** One of tsx's lines as esbuild's message, its source line read from the file. */
function lineMessage(l: TsxLine, cwd: string): PartialMessage {
  let lineText = "";
  try {
    lineText = readFileSync(resolve(cwd, l.file), "utf8").split(/\r?\n/)[l.line - 1] ?? "";
  } catch {
    // the file is gone: the place and the message still say enough
  }
  return { text: l.text, location: { file: shownPath(resolve(cwd, l.file), cwd), line: l.line, column: l.column, lineText } };
}
