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
import type { Conversation } from "./offlineConversation.ts";
import { dialogueLine, finishesTask, MONOLOGUE_VERBS, thoughtLine } from "./offlineLines.ts";

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
 * The mood the offline model reports. Frustration in this message, or in their message before
 * it (a check every few turns has not seen that one) unless the soul is already frustrated;
 * once frustrated, any message without frustration calms it. A technical problem engages it.
 */
function moodOf(c: Conversation): string {
  const current = c.prompt.soulState["emotionalState"] ?? "neutral";
  if (c.signals.frustrated) return "frustrated";
  if (current === "frustrated") return c.signals.calm ? "engaged" : "neutral";
  if (c.signals.calm) return "neutral";
  if (c.previous?.frustrated) return "frustrated";
  if (c.signals.problem) return "engaged";
  return current;
}

function soulState(c: Conversation): string {
  const topic = c.said ? c.said.split(" ").slice(0, 6).join(" ") : "none";
  const lines = [`emotionalState: ${moodOf(c)}`, `currentTopic: ${topic}`];
  // The empty line is how the instruction asks for a finished task to be cleared.
  if (c.prompt.clearsTask && finishesTask(c)) lines.push("currentTask:");
  return lines.join("\n");
}
