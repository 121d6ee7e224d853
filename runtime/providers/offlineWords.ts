/**
 * Words that carry meaning, for the offline model's comparisons: a statement against what the
 * person said (offlineJudgement.ts), a question against what they said before (offlineRecall.ts).
 *
 * It exists on its own because both compare the same way: lower case, short and common words
 * left out, a light stem so "planes" meets "plane" and "restored" meets "restore".
 */

const COMMON = new Set(
  (
    "the and for with that this these those about from into onto over under are was were been being has have had " +
    "his her hers she him its our ours your yours you they them their theirs who whom whose what which when where why how " +
    "does did doing can could would should will shall may might must just some any all not very really also too " +
    "there here then than now out off yes but nor yet only own same such more most much many other another each " +
    "user users person people someone soul thing things something anything"
  ).split(" "),
);

/** "planes", "plane" -> "plan"; "restored", "restoring", "restore" -> "restor". */
function stem(word: string): string {
  const cut = /(?:ing|ed|es|s|e)$/.exec(word);
  return cut && word.length - cut[0].length >= 3 ? word.slice(0, -cut[0].length) : word;
}

/** The meaningful words of a text, stemmed, without the common ones and without `exclude` (names, asking words). */
export function contentWords(text: string, exclude: readonly string[] = []): string[] {
  const skip = new Set(exclude.map((w) => stem(w.toLowerCase())));
  const words = text.toLowerCase().match(/\p{L}[\p{L}\p{N}]*/gu) ?? [];
  return words.filter((w) => w.length >= 3 && !COMMON.has(w)).map(stem).filter((w) => !skip.has(w));
}
