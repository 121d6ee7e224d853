/**
 * The offline model's answer to a tagged format (the cognitive pipeline's single call): every
 * requested tag, in order, closed, with what the offline model makes of the turn: the lines
 * (offlineLines.ts), the checks, the user model it would write, and the soul state it reports.
 *
 * It exists apart from the provider because the user model and the soul state are where the
 * offline model's reading changes the soul: a name goes into the user model, frustration into
 * `emotionalState`, a finished task clears `currentTask`. That is what moves a soul through
 * its process graph offline, so it is kept in one place.
 */
import { pick } from "./offlineChoice.ts";
import { topicOf, type Conversation } from "./offlineConversation.ts";
import { dialogueLine, finishesTask, MONOLOGUE_VERBS, thoughtLine } from "./offlineLines.ts";
import { readSignals } from "./offlineSignals.ts";

const DIALOGUE_VERBS = ["said", "explained", "offered", "noted", "observed", "replied", "remarked"];

export function tagsAnswer(tags: readonly string[], c: Conversation): string {
  const wanted = new Set(tags);
  const parts = tags.map((tag) => {
    switch (tag) {
      case "internal_monologue":
        return `<internal_monologue verb="${pick(MONOLOGUE_VERBS, c.seed, tag)}">\n${thoughtLine(c)}\n</internal_monologue>`;
      case "external_dialogue":
        // The verbs the instruction names, when it names some (the frustrated mode does).
        return `<external_dialogue verb="${pick(c.prompt.dialogueVerbs ?? DIALOGUE_VERBS, c.seed, tag)}">\n${dialogueLine(c)}\n</external_dialogue>`;
      // A check is true when its update was requested too, so both halves of the gate run
      // offline; the user-model check also when the person gave their name, which is lasting.
      case "user_model_check":
        return `<user_model_check>${wanted.has("user_model_update") || c.nameGivenNow}</user_model_check>`;
      case "soul_state_check":
        return `<soul_state_check>${wanted.has("soul_state_update")}</soul_state_check>`;
      case "user_model_update":
        return `<user_model_update>\n${userModel(c)}\n</user_model_update>`;
      case "model_change_note":
        return `<model_change_note>${changeNote(c)}</model_change_note>`;
      case "soul_state_update":
        return `<soul_state_update>\n${soulState(c)}\n</soul_state_update>`;
      default:
        return `<${tag}>(offline model) ${tag.replace(/_/g, " ")}${c.said ? ` for "${c.said}"` : ""}</${tag}>`;
    }
  });
  return parts.join("\n");
}

function changeNote(c: Conversation): string {
  // A name the model in the prompt did not have yet is the news (the prompt may not show the model at all).
  if (c.name && (c.nameGivenNow || c.prompt.modelName !== c.name)) return `Learned their name: ${c.name} (offline model).`;
  return `Noted what ${c.name ?? c.speaker ?? "the user"} said most recently (offline model).`;
}

function userModel(c: Conversation): string {
  const said = c.said ? `"${c.said}"` : "nothing yet";
  return [
    `# ${c.name ?? c.speaker ?? "User"}`,
    "",
    "## Persona",
    // The name on a line of its own, so the next prompt's user model gives it back (offlinePrompt.ts).
    ...(c.name ? [`Name: ${c.name}`] : []),
    `Someone talking with the soul while it runs on the offline model.`,
    "",
    "## Speaking Style",
    c.signals.frustrated ? "Blunt when things go wrong." : "Not enough conversation yet to tell.",
    "",
    "## Conversational Context",
    `Most recently said ${said}.`,
    "",
    "## Worldview",
    "Unknown so far.",
    "",
    "## Interests & Domains",
    c.signals.problem ? `Building software; brought a fault: ${said}.` : c.said ? `Whatever ${said} is about.` : "Unknown so far.",
    "",
    "## Working Patterns",
    "Unknown so far.",
    "",
    "## Most Potent Memories",
    `Their last message: ${said}.`,
  ].join("\n");
}

/**
 * The mood the offline model reports. Frustration in this message, or in one of their messages
 * since it last reported (a soul checks its state every few turns: Claudius's main every third)
 * unless they calmed down after it; once frustrated, a request to focus makes it focused and any
 * other message without frustration calms it. A request to focus or go deep makes it focused,
 * a technical problem engaged.
 */
function moodOf(c: Conversation): string {
  const current = c.prompt.soulState["emotionalState"] ?? "neutral";
  const s = c.signals;
  if (s.frustrated) return "frustrated";
  if (current === "frustrated") return s.focus ? "focused" : s.calm ? "engaged" : "neutral";
  if (s.focus) return "focused";
  if (s.calm) return "neutral";
  if (frustratedSinceLastReport(c)) return "frustrated";
  if (s.problem) return "engaged";
  return current;
}

/**
 * Their messages the last report did not see, newest first: the first frustrated one before a
 * calm one says the frustration is unanswered. The last report is found by its own note: it
 * wrote the first words of the message it answered as `currentTopic` (soulState below), so the
 * messages after that one are new; without the note (a first report, or the message has left
 * the history) every message the history still holds is.
 */
function frustratedSinceLastReport(c: Conversation): boolean {
  const noted = comparable(c.prompt.notes["currentTopic"] ?? "");
  const at = noted ? c.told.findLastIndex((text) => comparable(topicOf(text)) === noted) : -1;
  for (const text of c.told.slice(at + 1).reverse()) {
    const signals = readSignals(text);
    if (signals.frustrated) return true;
    if (signals.calm) return false;
  }
  return false;
}

/** Letters and digits only, lower case: a note comes back through the soul state's sanitising. */
function comparable(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
}

function soulState(c: Conversation): string {
  const topic = c.said ? topicOf(c.said) : "none";
  const lines = [`emotionalState: ${moodOf(c)}`, `currentTopic: ${topic}`];
  // The empty line is how the instruction asks for a finished task to be cleared.
  if (c.prompt.clearsTask && finishesTask(c)) lines.push("currentTask:");
  return lines.join("\n");
}
