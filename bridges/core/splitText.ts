/**
 * Long speech split into platform messages (Slack takes about 40,000 characters in a
 * message but renders 4,000 well; Discord refuses more than 2,000). Splits prefer a
 * paragraph break, then a line break, then a sentence end, then a space, and never leave a
 * code fence open across two messages: a piece that ends inside a fence closes it, and the
 * next piece reopens it with the same info string (```ts), so each message renders on its own.
 */

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** The fence still open at the end of `text` (its opening line), if any. */
export function openFence(text: string): { marker: string; info: string } | undefined {
  let open: { marker: string; info: string } | undefined;
  for (const line of text.split("\n")) {
    const m = FENCE.exec(line);
    if (!m) continue;
    const marker = m[1] as string;
    if (!open) open = { marker, info: (m[2] ?? "").trim().slice(0, 20) };
    else if (marker[0] === open.marker[0] && marker.length >= open.marker.length && (m[2] ?? "").trim() === "") open = undefined;
  }
  return open;
}

/** Where to cut `text` at or before `max` characters: the best break in the last part of the window. */
function cutPoint(text: string, max: number): number {
  const window = text.slice(0, max);
  const floor = Math.floor(max / 2);
  for (const pattern of [/\n\n(?![\s\S]*\n\n)/, /\n(?![\s\S]*\n)/, /[.!?。！？](?=\s)(?![\s\S]*[.!?。！？]\s)/, / (?![\s\S]* )/]) {
    const m = pattern.exec(window);
    if (m && m.index >= floor) return m.index + m[0].length;
  }
  // No natural break: cut hard, but never inside a surrogate pair.
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

/**
 * Splits `text` into pieces of at most `limit` characters (UTF-16 units, as platforms count).
 * Text within the limit comes back as one piece; empty text as none.
 */
export function splitText(text: string, limit: number): string[] {
  if (limit < 32) throw new Error(`splitText: a limit of ${limit} is too small to split with fences kept`);
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    // Room for the closing fence this piece may need ("\n" + marker).
    let cut = cutPoint(rest, limit - 12);
    let piece = rest.slice(0, cut);
    const fence = openFence(piece);
    if (fence) {
      const close = `${piece.endsWith("\n") ? "" : "\n"}${fence.marker}`;
      if (piece.length + close.length > limit) {
        cut = cutPoint(rest, limit - close.length - 1);
        piece = rest.slice(0, cut);
      }
      pieces.push(piece.trimEnd() + (piece.trimEnd().endsWith("\n") ? "" : "\n") + fence.marker);
      rest = `${fence.marker}${fence.info}\n${rest.slice(cut).replace(/^\n/, "")}`;
    } else {
      pieces.push(piece.trimEnd());
      rest = rest.slice(cut).replace(/^\s+/, "");
    }
  }
  if (rest.trim().length > 0) pieces.push(rest);
  return pieces.filter((p) => p.trim().length > 0);
}
