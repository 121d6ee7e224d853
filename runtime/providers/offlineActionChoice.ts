/**
 * The offline model's answer to an ISM action choice (actors/ism/chooseAction.ts): the JSON
 * `{ actions, reasoning }` whose action names the schema lists as an enum, with the decision
 * log in the instruction.
 *
 * It exists on its own because a choice seeded by a hash would wander (Respond first, the
 * same action twice, DONE before anything was done), and the demo is meant to show the ISM
 * working a problem through. Offline, the ISM takes the listed actions in the order the soul
 * lists them, one a loop, never one the decision log already shows, and says DONE when none
 * is left. When the person asked to focus or go deep (offlineSignals.ts), the first action whose
 * name or description speaks of focus, depth or escalation goes first. Claudius lists Think,
 * Research, Respond, Escalate: offline it thinks, recalls and responds, and Respond ends the
 * phase; asked to go deep, it escalates, and deepWork takes the task up.
 */
import type { Conversation } from "./offlineConversation.ts";
import { FOCUS_TOPIC } from "./offlineJudgement.ts";

type Schema = Record<string, unknown>;

const asSchema = (value: unknown): Schema | undefined =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Schema) : undefined;

/** The enum of action names, when the schema is an ISM choice (`actions`: array of enum strings, plus `reasoning`). */
function actionNames(schema: unknown): string[] | undefined {
  const properties = asSchema(asSchema(schema)?.properties);
  const items = asSchema(asSchema(properties?.actions)?.items);
  if (!properties?.reasoning || !Array.isArray(items?.enum)) return undefined;
  const names = items.enum.filter((n): n is string => typeof n === "string");
  return names.length ? names : undefined;
}

/** The names in the log's `Loop N: chose [A, B]` lines: what the ISM has already done. */
function chosenSoFar(command: string): Set<string> {
  const at = command.indexOf("## Decision Log");
  const log = at < 0 ? "" : command.slice(at);
  const chosen = new Set<string>();
  for (const m of log.matchAll(/^Loop \d+: chose \[([^\]\n]*)\]/gm)) {
    for (const name of m[1]!.split(",")) chosen.add(name.trim());
  }
  return chosen;
}

/** Each action's description, from the instruction's `- **Name**: description` list. */
function descriptions(command: string): Map<string, string> {
  const at = command.indexOf("## Available Actions");
  const end = command.indexOf("\n## ", at + 1);
  const list = at < 0 ? "" : command.slice(at, end < 0 ? undefined : end);
  return new Map([...list.matchAll(/^- \*\*([^*\n]+)\*\*: (.*)$/gm)].map((m) => [m[1]!, m[2]!] as const));
}

/**
 * The choice as JSON, or undefined when the request is not an ISM choice (the schema is not
 * one, or the instruction has no decision log).
 */
export function offlineActionChoice(schema: unknown, command: string, c: Pick<Conversation, "signals">): string | undefined {
  const names = actionNames(schema);
  if (!names || !command.includes("## Decision Log")) return undefined;
  const done = names.find((n) => n.toUpperCase() === "DONE");
  const chosen = chosenSoFar(command);
  const open = names.filter((n) => n !== done && !chosen.has(n));
  const described = descriptions(command);
  const focused = c.signals.focus ? open.find((n) => FOCUS_TOPIC.test(`${n} ${described.get(n) ?? ""}`)) : undefined;
  const next = focused ?? open[0];
  const action = next ?? done ?? names[0]!;
  const reasoning =
    next !== undefined
      ? `Offline model: taking the listed actions in order, one a loop; ${next} is next.`
      : "Offline model: every listed action has been taken; the goal is as met as it can be offline.";
  return JSON.stringify({ actions: [action], reasoning });
}
