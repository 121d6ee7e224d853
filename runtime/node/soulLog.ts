/**
 * What a node's log says about its souls: each line a child of the node's logger with the
 * soul's id, and the turn's trace (`<soul>:<turn>`, what the turn's speech and events carry)
 * where the event belongs to a turn, so `jq 'select(.trace=="sam:3")'` finds one turn's lines.
 * A failed turn is a warning (the soul keeps running; the perception stays in its inbox with
 * the error); everything a turn does in the ordinary way is `debug`.
 */
import { failureReason, type SoulEvent } from "../../actors/soul/index.ts";
import { redactSecrets, type Logger } from "../log/index.ts";

type Level = "debug" | "info" | "warn";
type Line = [context: Record<string, unknown>, message: string];

/** The level of each event the log shows (`log` and `whisper` events are the events subject's alone). */
const LEVELS: Partial<Record<SoulEvent["type"], Level>> = {
  turn: "debug",
  transition: "debug",
  error: "warn",
  intercepted: "debug",
  whisperIgnored: "debug",
  scheduled: "debug",
  expired: "info",
};

export function createSoulLog(node: Logger): (event: SoulEvent) => void {
  const souls = new Map<string, Logger>();
  const of = (soulId: string) => {
    let logger = souls.get(soulId);
    if (!logger) souls.set(soulId, (logger = node.child({ soul: soulId })));
    return logger;
  };
  return (event) => {
    const level = LEVELS[event.type];
    if (!level) return;
    const logger = of(event.soulId);
    // Turns and transitions come with every perception: no line is built for a level that is off.
    if (!logger.isLevelEnabled(level)) return;
    const line = lineOf(event);
    if (!line) return;
    const [context, message] = line;
    // A soul's error quotes whatever failed (a provider's message with a key in it); a caller's own logger may not redact.
    logger[level](context, redactSecrets(message));
  };
}

function lineOf(event: SoulEvent): Line | undefined {
  const soul = `soul ${event.soulId}`;
  switch (event.type) {
    case "turn":
      return [{ trace: event.turnId, process: event.process, durationMs: event.durationMs, perception: event.perceptionId }, `${soul}: turn ${event.turn} done in ${event.process}`];
    case "transition":
      return [{ trace: event.turnId, perception: event.perceptionId }, `${soul}: ${event.from} → ${event.to}${event.executeNow ? " (executeNow)" : ""}`];
    case "error": {
      const context = { ...(event.turnId !== undefined ? { trace: event.turnId } : {}), ...(event.perceptionId !== undefined ? { perception: event.perceptionId } : {}) };
      return [context, `${soul}: ${event.phase} failed${event.process !== undefined ? ` in ${event.process}` : ""}: ${failureReason(event)}`];
    }
    case "intercepted":
      // The reason, never the proposal's text: what a gate stopped must not leave through the log either.
      return [{ trace: event.proposal.turnId, proposal: event.proposal.id }, `${soul}: a ${event.proposal.kind} was intercepted: ${event.reason}`];
    case "whisperIgnored":
      return [{}, `${soul}: a whisper from ${event.source} was not kept: ${event.reason}`];
    case "scheduled":
      return [{ schedule: event.id }, `${soul}: ${event.process} scheduled for ${new Date(event.at).toISOString()}`];
    case "expired":
      return [{}, `${soul} has expired`];
    default:
      // `log` events carry a process's own data and `whisper` events are routine: the events subject has them.
      return undefined;
  }
}
