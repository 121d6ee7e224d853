/**
 * A field's place in a document as an error names it: `["souls", 1, "blueprint"]` →
 * `souls[1].blueprint`. Here, the lowest layer whose errors name fields (a soul file), so the
 * cluster config's errors (runtime/node) name them the same way.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(part))) out += out ? `.${String(part)}` : String(part);
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}
