/**
 * Open Souls' `indentNicely` template tag: write a prompt indented with the code around it,
 * get it back flush left.
 *
 * The common indentation is measured on the template's own lines, not on interpolated
 * values, and a multi-line value is indented to the column of its placeholder. So
 *
 *     indentNicely`
 *       ## Notes
 *       ${"first\nsecond"}
 *     `
 *
 * gives "## Notes\nfirst\nsecond": the value's lines stay aligned with the text around them.
 * Leading and trailing blank lines go; blank lines inside keep their place (and lose their spaces).
 */
export function indentNicely(strings: TemplateStringsArray | readonly string[], ...values: unknown[]): string {
  const indent = commonIndent(strings);
  let out = "";
  for (let i = 0; i < strings.length; i++) {
    out += dedent(strings[i], indent, i === 0);
    if (i < values.length) {
      const value = values[i] === undefined || values[i] === null ? "" : String(values[i]);
      const column = /(?:^|\n)([ \t]*)$/.exec(out)?.[1] ?? "";
      // Only a placeholder that starts its line lends its indentation to the value's later lines.
      const startsLine = /(?:^|\n)[ \t]*$/.test(out);
      out += startsLine ? value.replace(/\n(?=[^\n])/g, `\n${column}`) : value;
    }
  }
  return out
    .split("\n")
    .map((line) => (line.trim() === "" ? "" : line))
    .join("\n")
    .replace(/^\n+/, "")
    .replace(/\n+$/, "");
}

/** The smallest indentation of any line of the template that has text (or a placeholder) on it. */
function commonIndent(strings: TemplateStringsArray | readonly string[]): number {
  let min = Number.POSITIVE_INFINITY;
  strings.forEach((s, i) => {
    const lines = s.split("\n");
    lines.forEach((line, j) => {
      // The first line of every chunk but the first continues a line begun earlier.
      if (j === 0 && i > 0) return;
      const isLast = j === lines.length - 1;
      const hasPlaceholder = isLast && i < strings.length - 1;
      if (line.trim() === "" && !hasPlaceholder) return;
      const width = /^[ \t]*/.exec(line)?.[0].length ?? 0;
      min = Math.min(min, width);
    });
  });
  return Number.isFinite(min) ? min : 0;
}

function dedent(chunk: string, indent: number, first: boolean): string {
  if (indent === 0) return chunk;
  const lines = chunk.split("\n");
  return lines.map((line, j) => (j === 0 && !first ? line : removeIndent(line, indent))).join("\n");
}

function removeIndent(line: string, indent: number): string {
  let cut = 0;
  while (cut < indent && cut < line.length && (line[cut] === " " || line[cut] === "\t")) cut++;
  return line.slice(cut);
}
