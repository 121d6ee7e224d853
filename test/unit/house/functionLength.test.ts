/**
 * No function over 100 lines where a turn's work is composed (runtime/node, actors/soul):
 * a longer one hides steps that deserve names. Functions are found with swc's TypeScript
 * parser, so nested functions, arrows and methods each count on their own lines.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseSync } from "@swc/core";
import { expect, it } from "vitest";

const repo = resolve(import.meta.dirname, "../../..");
const MAX_LINES = 100;
const FOLDERS = ["runtime/node", "actors/soul"];
/**
 * The functions still over the limit, each at most this long, until they are split (issue 11,
 * item 6: startNode into the named steps a node takes, jetStreamPerceptionSource by concept).
 * The list may only shrink: a function that grows past its figure, or a new one past the
 * limit, fails.
 */
const NOT_YET_SPLIT: Record<string, number> = {
};
const FUNCTION_TYPES = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression", "ClassMethod", "PrivateMethod", "Constructor", "GetterProperty", "SetterProperty", "MethodProperty"]);

interface Span { start: number; end: number }
interface FoundFunction { name: string; line: number; lines: number }

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return entry.endsWith(".ts") && !entry.endsWith(".d.ts") ? [path] : [];
  });
}

function nameOf(node: Record<string, unknown>, parentKey: string | undefined): string {
  const ident = (node["identifier"] ?? node["key"]) as { value?: string } | undefined;
  return ident?.value ?? parentKey ?? "(anonymous)";
}

/** Every function in one file, with its length in lines. */
function functionsIn(source: string): FoundFunction[] {
  const module = parseSync(source, { syntax: "typescript", target: "es2022" });
  // swc's spans are byte offsets that keep counting across parses in one process.
  const base = module.span.start;
  const bytes = Buffer.from(source);
  const lineAt = (offset: number) => bytes.subarray(0, Math.max(0, offset - base)).toString().split("\n").length;
  const found: FoundFunction[] = [];
  const visit = (node: unknown, key: string | undefined, declared: string | undefined): void => {
    if (Array.isArray(node)) return node.forEach((n) => visit(n, key, declared));
    if (!node || typeof node !== "object") return;
    const record = node as Record<string, unknown>;
    // `const startNode = async () => {...}` names its arrow.
    const name = record["type"] === "VariableDeclarator" ? ((record["id"] as { value?: string })?.value ?? declared) : declared;
    if (FUNCTION_TYPES.has(String(record["type"])) && record["span"]) {
      const span = record["span"] as Span;
      const line = lineAt(span.start);
      found.push({ name: nameOf(record, name), line, lines: lineAt(span.end) - line + 1 });
    }
    for (const [k, v] of Object.entries(record)) if (k !== "span") visit(v, k, name);
  };
  visit(module.body, undefined, undefined);
  return found;
}

it("finds functions and measures them in lines", () => {
  const source = `const a = 1;\nexport function outer() {\n  const inner = () => {\n    return 1;\n  };\n  return inner();\n}\nclass K { method() {\n  return 2;\n} }\n`;
  expect(functionsIn(source)).toEqual([
    { name: "outer", line: 2, lines: 6 },
    { name: "inner", line: 3, lines: 3 },
    { name: "method", line: 8, lines: 3 },
  ]);
});

it(`no function in ${FOLDERS.join(" or ")} is over ${MAX_LINES} lines, and none not yet split grows`, () => {
  const long: string[] = [];
  let counted = 0;
  for (const folder of FOLDERS) {
    for (const file of tsFiles(join(repo, folder))) {
      for (const f of functionsIn(readFileSync(file, "utf8"))) {
        counted++;
        const known = NOT_YET_SPLIT[`${relative(repo, file)} ${f.name}`];
        if (f.lines > (known ?? MAX_LINES)) long.push(`${relative(repo, file)}:${f.line} ${f.name} is ${f.lines} lines`);
      }
    }
  }
  expect(counted).toBeGreaterThan(100);
  expect(long).toEqual([]);
});
