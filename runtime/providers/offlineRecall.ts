/**
 * The offline model's answer to a question about something the person told the soul ("What did
 * I tell you my name was?", "Do you remember what I restore?"): from what the soul recorded,
 * never an echo of the question.
 *
 * It exists apart from the lines because it is the one answer made from memory: the name comes
 * from wherever it was recorded (their message, the soul's own monologue note, the user model:
 * offlineConversation.ts), anything else from their earlier messages the prompt still holds,
 * the newest one that shares a word with the question. What it cannot find it says it cannot.
 */
import { snippet, type Conversation } from "./offlineConversation.ts";
import { contentWords } from "./offlineWords.ts";

/** Words of the question that ask rather than name what was told. */
const ASKING = new Set(["tell", "told", "say", "said", "mention", "mentioned", "write", "wrote", "remember", "recall", "remind", "know"]);

/** The sentence that answers a recall question (to follow an address), or undefined when the message asks none. */
export function recallAnswer(c: Conversation): string | undefined {
  if (!c.signals.recall) return undefined;
  const question = c.lastUserText;
  if (/\bname\b|\bwho am i\b/i.test(question)) {
    return c.name && !c.nameGivenNow ? `you told me your name is ${c.name}.` : "you haven't told me your name yet.";
  }
  const wanted = contentWords(question, [...ASKING, ...(c.speaker ? [c.speaker] : [])]);
  const told = [...c.told].reverse().find((text) => contentWords(text).some((w) => wanted.includes(w)));
  return told ? `you told me "${snippet(told)}".` : "I can't find that in what you've told me; I only keep the last few messages and your name.";
}
