/**
 * Models asked for `Samantha said: "..."` answer with that prefix (often with extra words:
 * `Samantha said softly: "..."`) and the quotes. Steps keep only the utterance.
 *
 * The whole-answer and the streaming versions strip exactly the same characters, so the
 * chunks a caller streams out join to the value the step returns.
 */
import type { WorkingMemory } from "./WorkingMemory.ts";

/** How far after the name the colon may come: `Samantha said with a sinister smile:` fits. */
const MAX_PREFIX_TAIL = 80;
const QUOTE = /["“”]/;
const TRAILING = /[\s"“”]*$/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

type PrefixDecision = { decided: false } | { decided: true; restStart: number };

/**
 * Whether the answer starts with `Name <words>:`. Undecided while the text so far could still
 * become such a prefix; `final` says no more text will come.
 */
function decidePrefix(raw: string, name: string, final: boolean): PrefixDecision {
  const body = raw.trimStart();
  const offset = raw.length - body.length;
  if (!name) return { decided: true, restStart: offset };
  if (body.length < name.length) {
    const couldBe = new RegExp(`^${escapeRegExp(body)}`, "i").test(name);
    return couldBe && !final ? { decided: false } : { decided: true, restStart: offset };
  }
  if (!new RegExp(`^${escapeRegExp(name)}`, "i").test(body)) return { decided: true, restStart: offset };
  const after = body.slice(name.length);
  const k = /^[^:\n]*/.exec(after)?.[0].length ?? 0;
  if (k <= MAX_PREFIX_TAIL && after[k] === ":") return { decided: true, restStart: offset + name.length + k + 1 };
  if (k < after.length || k > MAX_PREFIX_TAIL || final) return { decided: true, restStart: offset };
  return { decided: false };
}

/** After the prefix: drop leading space and one opening quote. Undefined while only those have arrived. */
function dropOpening(rest: string): string | undefined {
  let text = rest.trimStart();
  if (text.length === 0) return undefined;
  if (QUOTE.test(text[0])) {
    text = text.slice(1).trimStart();
    if (text.length === 0) return undefined;
  }
  return text;
}

/** Drops trailing space, one closing quote, and the space before it. */
function dropClosing(text: string): string {
  let out = text.trimEnd();
  if (out.length > 0 && QUOTE.test(out[out.length - 1])) out = out.slice(0, -1).trimEnd();
  return out;
}

/** Open Souls' `stripEntityAndVerb`: the utterance without `Name verb:` and its quotes. */
export function stripEntityAndVerb(soulName: string, _verb: string, response: string): string {
  const decision = decidePrefix(response, soulName, true);
  const restStart = decision.decided ? decision.restStart : 0;
  return dropClosing(dropOpening(response.slice(restStart)) ?? "");
}

/** What can be sent already: a prefix of the final stripped text whatever comes next. */
function safePrefix(raw: string, soulName: string): string {
  const decision = decidePrefix(raw, soulName, false);
  if (!decision.decided) return "";
  const text = dropOpening(raw.slice(decision.restStart));
  if (text === undefined) return "";
  // Trailing spaces and quotes may turn out to be the closing quote: hold them back.
  return text.replace(TRAILING, "");
}

/**
 * Open Souls' `stripEntityAndVerbFromStream`, usable directly as a step's `streamProcessor`.
 * Holds back only what it cannot decide yet (the start, until the prefix is known; trailing
 * quotes and spaces, until more text follows them).
 */
export function stripEntityAndVerbFromStream(
  memory: Pick<WorkingMemory, "soulName">,
  stream: AsyncIterable<string>,
): AsyncIterable<string> {
  const soulName = memory.soulName;
  return (async function* () {
    let raw = "";
    let sent = 0;
    for await (const chunk of stream) {
      raw += chunk;
      const safe = safePrefix(raw, soulName);
      if (safe.length > sent) {
        yield safe.slice(sent);
        sent = safe.length;
      }
    }
    const rest = stripEntityAndVerb(soulName, "", raw).slice(sent);
    if (rest.length > 0) yield rest;
  })();
}
