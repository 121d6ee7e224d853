/**
 * What the offline model says and thinks: the dialogue, the monologue, a daimon's intuition
 * and a summary, each built from what it read (offlineConversation.ts) and deterministic.
 *
 * It exists apart from the provider because the lines are the offline model's "mind": how
 * the person's signals, their name, a whispered intuition and the instructions' asks show in
 * what it says. Every spoken line states plainly that it is the offline model.
 */
import { pick } from "./offlineChoice.ts";
import { lastFencedBlock, NAME_NOTE, type Conversation } from "./offlineConversation.ts";
import { recallAnswer } from "./offlineRecall.ts";
import { readSignals } from "./offlineSignals.ts";

export const MONOLOGUE_VERBS = ["thought", "mused", "pondered", "wondered", "considered", "reflected", "noticed", "weighed"];

/**
 * The message is flagged as an open-ended problem (worked through in the ISM) when the
 * instruction offers the marker and the person brings a technical problem, asks for careful or
 * step-by-step work, or asks to focus or go deep; never while frustrated (the mood goes first),
 * nor for a question about what they told the soul (that is answered from memory).
 */
export function flagsOpenProblem(c: Conversation): boolean {
  const s = c.signals;
  return c.prompt.openProblemMarker !== undefined && (s.problem || s.careful || s.focus) && !s.frustrated && !s.recall;
}

/** The current task is finished: the instruction offers its marker and the person says it is done. */
export function finishesTask(c: Conversation): boolean {
  return (c.prompt.taskCompleteMarker !== undefined || c.prompt.clearsTask) && (c.signals.done || c.signals.calm);
}

/** How a whispered intuition shows in what the soul says: as its own hunch, followed. */
function hunch(c: Conversation): string {
  const whisper = c.prompt.whisper?.replace(/\s*\(offline intuition\)\s*$/, "").trim();
  return whisper ? ` A hunch surfaces, and I follow it: ${whisper}` : "";
}

const STEPS = "say exactly what you want to end with; take the smallest step toward it and check it; then the next, one at a time.";

const CHECKLIST =
  "read the first error, not the last; reproduce it with the smallest command that fails; then look at what changed since it last worked.";

export function dialogueLine(c: Conversation): string {
  if (!c.said) {
    return "Hello! I'm the offline model, running without a language model, so my answers are simple echoes.";
  }
  const hello = c.nameGivenNow || c.userTurns <= 1 ? `Hello${c.name ?? c.speaker ? `, ${c.name ?? c.speaker}` : ""}! ` : "";
  // Past the greeting, a known name still opens the answers that speak to the person's trouble.
  const address = hello || (c.name ? `${c.name}, ` : "");
  const opening = (rest: string) => (address.endsWith(", ") ? `${address}${rest}` : `${address}${rest.charAt(0).toUpperCase()}${rest.slice(1)}`);
  const recalled = recallAnswer(c);
  if (recalled) {
    return `${opening(recalled)} I'm the offline model: I remember what you tell me, but I can't really think about it.${hunch(c)}`;
  }
  if (c.prompt.shortAnswer) {
    // Asked for one or two sentences (the frustrated mode): the second is the hunch when there is one.
    const second = hunch(c).trim() || "I'm only the offline model, so I'll keep it short.";
    return `${c.name ? `${c.name}, ` : ""}I hear you: "${c.said}" (offline model). ${second}`;
  }
  if (flagsOpenProblem(c)) {
    // The instruction asks for one sentence on how the problem will be approached.
    return `${opening(`I'll work through "${c.said}"`)} step by step before I answer, though as the offline model I can offer a checklist rather than a diagnosis.`;
  }
  if (c.signals.frustrated) {
    return `${opening(`I can hear the frustration in "${c.said}".`)} I'm the offline model, with no language model behind me, so I can't do much about it, but I'm listening.${hunch(c)}`;
  }
  if (c.signals.problem) {
    return `${opening(`here is how I'd work "${c.said}": ${CHECKLIST}`)} I'm the offline model, so that's a checklist, not a diagnosis.${hunch(c)}`;
  }
  if (c.signals.focus) {
    return `${opening(`heads down on "${c.said}", then.`)} I'll stay on it until you say it's done, though as the offline model I can hold the thread, not do the work.${hunch(c)}`;
  }
  if (c.signals.careful) {
    return `${opening(`step by step, then, for "${c.said}":`)} ${STEPS} I'm the offline model, so that's the method, not the answer.${hunch(c)}`;
  }
  if (hello) {
    return `${hello}You said "${c.said}". I'm running on the offline model: no language model is connected, so I can keep you company and remember what you tell me, but not really think.${hunch(c)}`;
  }
  const variants = [
    `You said "${c.said}". I'm the offline model, with no language model behind me, so I can only echo that back.`,
    `(offline model) I heard "${c.said}", but without a language model connected I can't say much more.`,
    `I'm the offline model, so I can't really think about "${c.said}", but I did hear it.`,
  ];
  const recall = c.earlier && c.earlier !== c.said ? ` Earlier you told me "${c.earlier}".` : "";
  return `${pick(variants, c.seed, "dialogue")}${recall}${hunch(c)}`;
}

export function thoughtLine(c: Conversation): string {
  const who = c.speaker ?? "The user";
  if (!c.said) return "Nothing has been said yet; as the offline model I can only wait and answer plainly.";
  const notes = [
    // The name goes into every monologue once known: the history carries it to later turns.
    c.name ? NAME_NOTE(c.name) : "",
    c.signals.frustrated ? "They sound frustrated." : "",
    c.signals.problem ? "Something is broken; it wants working through, step by step." : "",
    c.signals.careful && !c.signals.problem ? "They want it done carefully, step by step." : "",
    c.signals.focus ? "They want to focus and go deep." : "",
    c.signals.recall ? "They ask what they told me." : "",
    c.prompt.whisper ? "An intuition surfaced; I will heed it." : "",
  ].filter(Boolean);
  const markers = [flagsOpenProblem(c) ? c.prompt.openProblemMarker : undefined, finishesTask(c) ? c.prompt.taskCompleteMarker : undefined];
  const line = `${who} said "${c.said}". ${notes.length ? `${notes.join(" ")} ` : ""}I'm running as the offline model, so I'll just answer plainly.`;
  // A marker the instruction asked for goes on a line of its own, last (souls/claudius/signals.ts).
  return [line, ...markers.filter((m): m is string => m !== undefined)].join("\n");
}

/**
 * A daimon's intuition: short, oblique, about what the person said (never an echo of the
 * soul's own words). The soul is named in the command ("the daimon of Claudius").
 */
export function intuitionLine(c: Conversation): string {
  // "the daimon of Claudius", or (divination.ts) "the daimon of the soul named “Claudius”".
  const soul = /daimon of (?:the soul named )?[“"]?([^,.\n“”"]+)/.exec(c.command)?.[1]?.trim();
  const transcript = lastFencedBlock(c.lastUserRaw) ?? c.lastUserRaw;
  const lines = transcript.split("\n").map((l) => l.trim()).filter(Boolean);
  const spoken = lines.filter((l) => !soul || !l.startsWith(`${soul}:`));
  const last = (spoken.at(-1) ?? c.said).replace(/^[^:"]{1,40}: /, "");
  const topic = last.split(/\s+/).slice(0, 6).join(" ").replace(/[.!?,;:]+$/, "");
  if (!topic) return "Nothing has surfaced yet; wait. (offline intuition)";
  const signals = readSignals(last);
  let body: string;
  if (signals.name) body = `They gave their name, ${signals.name}: use it, and they will know they were heard.`;
  else if (signals.frustrated) body = "Their patience is fraying: fewer words, and own the miss.";
  else if (signals.problem) body = `The fault in "${topic}" has a first cause: ask for the first error, not the last.`;
  else {
    const variants = [
      `They return to "${topic}"; there is more under it than they have said.`,
      `Beneath "${topic}" lies a question they have not asked yet.`,
      `Listen for what "${topic}" is guarding.`,
    ];
    body = pick(variants, c.seed, "intuition");
  }
  // The offline model says plainly what it is, in whispers too.
  return `${body} (offline intuition)`;
}

export function summaryLine(c: Conversation): string {
  const who = c.soulName ?? "The soul";
  if (!c.said) return `${who} has learned nothing yet: the conversation is empty (offline model summary).`;
  return `${who} has learned so far that ${c.speaker ?? "the user"} said "${c.said}" (offline model summary).`;
}
