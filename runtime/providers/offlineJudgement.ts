/**
 * How the offline model answers a soul's booleans and choices (`mentalQuery`, `decision`, any
 * boolean or enum in a JSON schema): from what the person said, by fixed rules, so a soul author
 * can drive every branch offline. README.md ("The offline model's rules") documents them:
 *
 * - A statement is judged by the first row of TOPICS whose words it uses: true when the
 *   person's last message carries that row's signal ("The user is frustrated" after "this
 *   stupid code never works!"). A statement that names no row is true when it shares a
 *   meaningful word with the message. A negation in the statement ("not", "n't", "no longer")
 *   turns the verdict over.
 * - A choice is, in order: for yes/no (true/false) choices, the verdict on the question asked;
 *   else the first choice the message names; else the first choice that names a row whose signal
 *   the message carries (`deepWork` for "let's focus"); else the first choice.
 *
 * The statement and the question are the soul's words (the step's instruction, the schema), never
 * the person's: their message is only read for its signals (offlineSignals.ts) and its words.
 */
import type { Conversation } from "./offlineConversation.ts";
import type { Signals } from "./offlineSignals.ts";
import { contentWords } from "./offlineWords.ts";

type Signal = Exclude<keyof Signals, "name">;

/** What "focus" looks like in a statement, a choice, or an ISM action's description. */
export const FOCUS_TOPIC = /focus|\bdeep|concentrat|escalat/i;

/** The rows, in the order they are tried: the first whose topic a statement uses decides it. */
const TOPICS: readonly { topic: RegExp; holds: (c: Conversation) => boolean }[] = [
  { topic: /\bname\b|introduc/i, holds: (c) => c.name !== undefined },
  ...(
    [
      [/frustrat|angry|anger|annoy|upset|irritat|furious|impatien/i, "frustrated"],
      [/careful|step[\s_-]*by[\s_-]*step|thorough|detail|methodical/i, "careful"],
      [FOCUS_TOPIC, "focus"],
      [/remember|recall|remind/i, "recall"],
      [/problem|error|\bbug|broken|\bfail|fault|\bfix/i, "problem"],
      [/\bdone\b|finish|complete|solved|resolved/i, "done"],
      [/\bcalm|thank|grateful|apolog|satisf|pleased|relieved/i, "calm"],
      [/question|\bask(?:s|ed|ing)?\b|wants? to know/i, "question"],
    ] as const satisfies readonly (readonly [RegExp, Signal])[]
  ).map(([topic, signal]) => ({ topic, holds: (c: Conversation) => c.signals[signal] })),
];

const NEGATION = /\b(?:not|no longer|never)\b|n['’]t\b/i;

/** Words in camelCase, snake_case or kebab-case choices read as spaced words: `deepWork` is "deep Work". */
function spaced(text: string): string {
  return text.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[_-]+/g, " ");
}

/** The verdict on a statement (or a question: "Is the user frustrated?"), from the person's last message. */
export function judge(statement: string, c: Conversation): boolean {
  const text = spaced(statement);
  const row = TOPICS.find((r) => r.topic.test(text));
  const names = [c.speaker, c.name, c.soulName].filter((n): n is string => n !== undefined).flatMap((n) => n.split(/\s+/));
  const holds = row ? row.holds(c) : sharesWord(contentWords(text, names), c.lastUserText);
  return NEGATION.test(text) ? !holds : holds;
}

function sharesWord(words: readonly string[], said: string): boolean {
  const heard = new Set(contentWords(said));
  return words.some((w) => heard.has(w));
}

const YES = /^(?:yes|true|y)$/i;
const NO = /^(?:no|false|n)$/i;

/**
 * The choice among the options (enum values, kept as they are), for the question asked (the
 * decision's description, or the field's): see the file's comment for the order of the rules.
 */
export function choose<T>(options: readonly T[], question: string, c: Conversation): T {
  const labels = options.map((o) => spaced(String(o)).toLowerCase().trim());
  const yes = labels.findIndex((l) => YES.test(l));
  const no = labels.findIndex((l) => NO.test(l));
  if (yes >= 0 && no >= 0) return options[judge(question, c) ? yes : no]!;
  const said = ` ${spaced(c.lastUserText).toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ")} `;
  // A word of two letters or more: a one-letter choice ("a") would be named by every article.
  const named = labels.findIndex((l) => l.length >= 2 && said.includes(` ${l.replace(/[^\p{L}\p{N}]+/gu, " ")} `));
  if (named >= 0) return options[named]!;
  const signalled = labels.findIndex((l) => TOPICS.find((r) => r.topic.test(l))?.holds(c) === true);
  return options[signalled >= 0 ? signalled : 0]!;
}

/** The statement a `mentalQuery` instruction quotes (its `> ` lines), if the instruction has one. */
export function quotedStatement(command: string): string | undefined {
  const lines = [...command.matchAll(/^\s*> ?(.+)$/gm)].map((m) => m[1]!.trim()).filter(Boolean);
  return lines.length ? lines.join(" ") : undefined;
}

/** The `## Description` section of a `decision` instruction, if the instruction has one. */
export function describedQuestion(command: string): string | undefined {
  return /^## Description\s*\n([\s\S]*?)(?:\n## |\s*$)/m.exec(command)?.[1]?.trim() || undefined;
}
