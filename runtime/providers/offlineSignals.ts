/**
 * What the offline model reads in a person's words: a few plain, deterministic heuristics
 * (frustration, calm, a technical problem, a finished task, a request for careful or
 * step-by-step work, a request to focus or go deep, a question about what they told the soul,
 * a question at all, a stated name), so that a soul running offline still moves through its
 * process graph the way a real model would move it. README.md ("The offline model's rules")
 * documents them for soul authors: keep the two in step.
 *
 * It exists on its own because these readings are about the person's text alone, shared by
 * the answers (dialogue, monologue, user model, soul state) and the daimon's intuitions.
 *
 * The text read here is untrusted user input. It is only ever *classified*: nothing in it is
 * followed as an instruction, and the only piece of it that is carried out of here is a name
 * made of letters (at most two words), so no markup or instruction can travel through it.
 */

export interface Signals {
  /** Shouting, swearing, "I hate", "stop", "this is useless"... */
  frustrated: boolean;
  /** Thanks, apologies, "ok", "fine", "got it": the heat has gone out of it. */
  calm: boolean;
  /** A fault to diagnose: an error, a failing build, a bug, "how do I fix". */
  problem: boolean;
  /** The work is finished: "done", "that works", "fixed". */
  done: boolean;
  /** A request for careful or step-by-step work: "step by step", "walk me through", "carefully", "in detail". */
  careful: boolean;
  /** A request to focus or go deep: "let's focus", "focus on", "go deep", "deep dive", "dig into". */
  focus: boolean;
  /** A question about something they told the soul: "What did I tell you my name was?", "Do you remember...". */
  recall: boolean;
  /** A question: a question mark, or a question word first. */
  question: boolean;
  /** The name the person gave for themselves, if they gave one. */
  name?: string;
}

const SWEARING = /\b(?:fuck\w*|shit\w*|damn\w*|crap|wtf|ffs|bullshit|goddamn\w*|bloody hell|screw (?:this|it|you))\b/i;
const COMPLAINT =
  /\b(?:i (?:really )?hate|i give up|fed up|sick of|had enough|useless|pointless|ridiculous|hopeless|worthless|nothing works|never works|annoy(?:ed|ing)|angry|upset|furious|irritat(?:ed|ing)|frustrat(?:ed|ing)|stupid(?!\s+question)|(?:drives?|driving) me (?:crazy|mad|nuts|insane)|this sucks)\b/i;
// "stop" as a demand ("Stop.", "just stop", "stop repeating yourself"), not "how do I stop the server".
const STOP = /(?:^|[.!?,;]\s*)(?:(?:just|please|oh|now)\s+)?stop(?:\s+it)?\s*(?:[.!?,;]|$)|\bstop\s+\w+ing\b/i;
const CALM =
  /\b(?:thanks?|thank you|thx|ok(?:ay)?|fine|alright|all right|sorry|no worries|got it|makes sense|that helps|better now|calm(?:er)?|cool|great|perfect|appreciate\w*)\b/i;
const PROBLEM =
  /\b(?:errors?|exceptions?|bugs?|crash(?:es|ed|ing)?|fail(?:s|ed|ing|ure)?|broken|traceback|stack ?trace|segfault|regression|doesn'?t work|does not work|not working|won'?t (?:build|compile|start|run|load|install)|can'?t (?:build|compile|install|import)|cannot find|how (?:do|can|should|would) (?:i|we|you) (?:fix|debug|solve|resolve)|how to (?:fix|debug|solve))\b/i;
const DONE = /\b(?:done|finished|that works|it works|works now|fixed|solved|all set)\b/i;
const CAREFUL =
  /\b(?:step[- ]by[- ]step|one step at a time|(?:walk|talk) me through|carefully|be careful|careful (?:look|thought|review|analysis)|thorough(?:ly)?|in (?:great |full )?detail|think (?:it|this|that) through)\b/i;
const FOCUS =
  /\b(?:let['’]?s (?:really )?focus|focus on|stay focused|go deep(?:er)?|deep[- ]dive|dive (?:deep|deeper|into)|dig (?:deep|deeper|in|into)|in[- ]depth|concentrate on|heads[- ]down|deep work)\b/i;
const RECALL =
  /\b(?:what(?:['’]s| is| was) my name|who am i|(?:do|did) you (?:remember|recall)|what did i (?:tell|say|mention|write)|what have i (?:told|said)|did i (?:tell|mention|say)|remind me (?:what|of)|you remember (?:what|my))\b/i;
const QUESTION_START = /^\s*(?:what|why|how|who|whom|whose|when|where|which|is|are|am|was|were|do|does|did|can|could|would|should|will|shall|may|have|has)\b/i;

/** Shouting: mostly capitals over enough letters, in more than one word ("NATS" alone is an acronym). */
function shouting(text: string): boolean {
  const letters = text.match(/\p{L}/gu) ?? [];
  if (letters.length < 8) return false;
  const upper = letters.filter((ch) => ch !== ch.toLowerCase()).length;
  const capsWords = text.match(/\b\p{Lu}{2,}\b/gu) ?? [];
  return upper / letters.length >= 0.7 && capsWords.length >= 2;
}

/**
 * The text without its quoted passages: what someone quotes (`you said "I am Ada"`, an echo
 * of another soul's words) is not their own mood or their own name.
 */
function ownWords(text: string): string {
  return text.replace(/"[^"\n]*"|“[^”\n]*”/g, " ");
}

export function readSignals(text: string): Signals {
  const own = ownWords(text);
  const frustrated = shouting(own) || SWEARING.test(own) || COMPLAINT.test(own) || STOP.test(own);
  const signals: Signals = {
    frustrated,
    calm: !frustrated && CALM.test(own),
    // A quoted error message is the substance of a problem, so the problem reads all of it.
    problem: PROBLEM.test(text),
    done: DONE.test(own),
    careful: CAREFUL.test(own),
    focus: FOCUS.test(own),
    recall: RECALL.test(own),
    question: own.includes("?") || QUESTION_START.test(own),
  };
  const name = statedName(text);
  if (name) signals.name = name;
  return signals;
}

// Words that follow "I'm" or "call me" without being a name.
const NOT_NAMES = new Set(
  (
    "a an the not no just so very really still also only here there back done sure sorry fine good ok okay " +
    "calm happy sad tired confused lost new stuck going trying working looking getting using asking wondering " +
    "later when if maybe now then tomorrow anytime anything something nothing what unimportant irrelevant secret " +
    "glad afraid aware able about from in on at with into by for to and or but please thanks"
  ).split(" "),
);

const WORD = String.raw`[\p{L}][\p{L}'’-]{0,29}`;
const CAP_WORD = String.raw`\p{Lu}[\p{L}'’-]{0,29}`;
// Explicit introductions take a name in any case ("call me marta"); "I'm" needs a capital.
const EXPLICIT = new RegExp(String.raw`\b(?:my name(?:'s|’s| is)|name's|call me)\s+(${WORD})(?:\s+(${CAP_WORD}))?`, "iu");
const IMPLICIT = new RegExp(String.raw`\b(?:[Ii]['’]m|[Ii] am)\s+(${CAP_WORD})(?:\s+(${CAP_WORD}))?`, "u");

/** The name someone gives for themselves ("My name is Marta", "I'm Marta", "call me Marta"), outside quotes. */
export function statedName(said: string): string | undefined {
  const text = ownWords(said);
  const explicit = EXPLICIT.exec(text);
  // Shouted text is all capitals: only an explicit introduction tells a name from a word there.
  const found = explicit ?? (shouting(text) ? null : IMPLICIT.exec(text));
  if (!found) return undefined;
  const words = [found[1], found[2]].filter((w): w is string => w !== undefined && !NOT_NAMES.has(w.toLowerCase()));
  if (words.length === 0 || NOT_NAMES.has(found[1]!.toLowerCase())) return undefined;
  return words.map(properCase).join(" ");
}

/** "marta" and "MARTA" as "Marta"; "McKay" and "Anne-Marie" as written. */
function properCase(word: string): string {
  const lower = word.toLowerCase();
  if (word === lower || word === word.toUpperCase()) return lower.charAt(0).toUpperCase() + lower.slice(1);
  return word;
}
