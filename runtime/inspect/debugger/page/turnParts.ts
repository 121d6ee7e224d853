/**
 * The parts of one turn as the timeline shows them: the perception, each cognitive step
 * (prompt, raw output, parsed value, model, tokens, latency), the proposals and what the
 * gates decided, whispers, working memory before and after by region, and why the soul did
 * not answer. Long text wraps; big blocks wait behind <details> until opened.
 */
import { badge, collapsible, fact, h, show, textBlock, type Child } from "./dom.ts";
import { count, ms, tokens } from "./format.ts";
import type { Memory, Proposal, Step, Turn } from "./types.ts";

/** Text longer than this (or with more lines) is collapsed behind a summary. */
const SHORT = { chars: 600, lines: 12 };
/** What a soul was told is what the reader came for: shown whole unless it is huge. */
const PERCEPTION_SHOWN = 4000;

function isShort(text: string): boolean {
  return text.length <= SHORT.chars && text.split("\n").length <= SHORT.lines;
}

/** A text shown as it is when short, else behind a summary with its first words. */
export function longText(summary: string, text: string, className = ""): HTMLElement {
  if (isShort(text)) return h("div", { class: "labelled" }, h("div", { class: "label" }, summary), textBlock(text, className));
  const preview = text.replace(/\s+/g, " ").slice(0, 90);
  return collapsible([h("span", { class: "label" }, summary), " ", h("span", { class: "preview" }, `${preview}… (${count(text.length)} characters)`)], () => textBlock(text, className), { class: "block" });
}

export function perceptionPart(p: Record<string, unknown> | undefined): HTMLElement {
  if (!p) return h("div", { class: "perception muted" }, "no perception (a scheduled or internal turn)");
  const who = typeof p["name"] === "string" ? p["name"] : "someone";
  const action = typeof p["action"] === "string" ? p["action"] : "perceived";
  const content = show(p["content"] ?? "");
  return h("div", { class: "perception" },
    h("div", { class: "perception-head" }, h("span", { class: "who" }, who), ` ${action}`),
    content.length <= PERCEPTION_SHOWN ? textBlock(content, "speech") : longText("message", content, "speech"),
    collapsible(h("span", { class: "label" }, "perception as received"), () => textBlock(show(p)), { class: "block subtle" }));
}

function promptPart(prompt: Step["prompt"]): HTMLElement {
  const chars = prompt.reduce((n, m) => n + (m.content?.length ?? 0), 0);
  return collapsible(h("span", { class: "label" }, `prompt: ${prompt.length} message${prompt.length === 1 ? "" : "s"}, ${count(chars)} characters`),
    () => h("ol", { class: "prompt" }, ...prompt.map((m) =>
      h("li", { class: `message role-${m.role}` }, h("div", { class: "role" }, m.name ? `${m.role} (${m.name})` : m.role), textBlock(show(m.content))))),
    { class: "block" });
}

export function stepPart(step: Step): HTMLElement {
  const valueText = show(step.value);
  const sameAsRaw = typeof step.value === "string" && step.value === step.raw;
  return h("li", { class: step.error ? "step step-error" : "step" },
    h("div", { class: "step-head" },
      h("span", { class: "step-name" }, step.step),
      fact("model", step.model),
      fact("tokens", tokens(step.tokens)),
      fact("latency", ms(step.latencyMs))),
    step.error ? h("div", { class: "error-line" }, "error: ", step.error) : null,
    promptPart(step.prompt ?? []),
    step.raw !== undefined ? longText("raw output", step.raw, "raw") : null,
    step.value === undefined ? null : sameAsRaw ? h("div", { class: "muted small" }, "parsed value: the raw output as it is") : longText("parsed value", valueText, "value"));
}

function verdictBadge(p: Proposal): HTMLElement {
  return badge(p.verdict, p.verdict, p.reason);
}

export function proposalsPart(proposals: Proposal[]): HTMLElement | null {
  if (proposals.length === 0) return null;
  return h("div", { class: "part" }, h("div", { class: "label" }, "proposals and gate decisions"),
    h("ul", { class: "proposals" }, ...proposals.map((p) =>
      h("li", { class: `proposal verdict-${p.verdict}` },
        h("div", { class: "proposal-head" }, verdictBadge(p), " ", h("span", { class: "mono" }, p.action ? `${p.kind}: ${p.action}` : p.kind),
          p.reason ? h("span", { class: "reason" }, ` — ${p.reason}`) : null),
        p.verdict === "intercepted" ? h("div", { class: "muted small" }, "content withheld (intercepted)") : p.content !== undefined ? textBlock(p.content, "speech") : null))));
}

export function whispersPart(whispers: Turn["whispers"]): HTMLElement | null {
  if (whispers.length === 0) return null;
  return h("div", { class: "part" }, h("div", { class: "label" }, "whispers"),
    h("ul", { class: "whispers" }, ...whispers.map((w) => h("li", { class: "whisper" }, h("span", { class: "who" }, w.source), textBlock(w.content)))));
}

export function silencePart(turn: Turn): HTMLElement | null {
  if (turn.answered) return null;
  const reason = turn.silence?.reason ?? "no answer";
  return h("div", { class: `silence silence-${reason}` }, h("strong", null, "Did not answer: "), reason, turn.silence?.detail ? ` — ${turn.silence.detail}` : "");
}

function memoryItem(m: Memory, mark?: "new" | "gone"): HTMLElement {
  const content = show(m.content);
  const role = m.name ? `${m.role} (${m.name})` : m.role;
  const head = h("div", { class: "role" }, role, mark ? badge(mark, mark) : null);
  // A long memory (a soul's whole system prompt) waits behind its first words.
  const body = isShort(content) ? [head, textBlock(content)] : [longText(role, content)];
  if (!isShort(content) && mark) body.unshift(badge(mark, mark));
  return h("li", { class: `memory role-${m.role}${mark ? ` memory-${mark}` : ""}` }, ...body);
}

/** Memories grouped by region, in the given order (then any other region). */
export function memoryByRegion(memories: Memory[], order: string[] = [], markOf: (m: Memory) => "new" | "gone" | undefined = () => undefined): HTMLElement {
  const regions = new Map<string, Memory[]>();
  for (const r of order) regions.set(r, []);
  for (const m of memories) regions.set(m.region ?? "default", [...(regions.get(m.region ?? "default") ?? []), m]);
  const groups: Child[] = [...regions].filter(([, ms]) => ms.length > 0).map(([region, ms]) =>
    h("div", { class: "region" }, h("div", { class: "region-name" }, `region ${region}`, h("span", { class: "muted" }, ` (${ms.length})`)),
      h("ul", { class: "memories" }, ...ms.map((m) => memoryItem(m, markOf(m))))));
  return h("div", { class: "memory-regions" }, ...(groups.length ? groups : [h("p", { class: "muted" }, "empty")]));
}

export function memoryPart(memory: Turn["memory"]): HTMLElement {
  // A memory's id is its identity (two answers may say the same words); older memories may have none.
  const key = (m: Memory) => (typeof m.id === "string" ? m.id : JSON.stringify([m.role, m.region, m.content]));
  const before = memory.before;
  const beforeKeys = new Set((before ?? []).map(key));
  const afterKeys = new Set(memory.after.map(key));
  const added = memory.after.filter((m) => !beforeKeys.has(key(m))).length;
  const summary = before === null ? `working memory after: ${memory.after.length} (before: no longer kept)` : `working memory: ${before.length} before → ${memory.after.length} after (${added} new)`;
  return collapsible(h("span", { class: "label" }, summary), () => [
    h("div", { class: "label small" }, "after"),
    memoryByRegion(memory.after, [], (m) => (before !== null && !beforeKeys.has(key(m)) ? "new" : undefined)),
    before === null ? null : collapsible(h("span", { class: "label small" }, "before"), () => memoryByRegion(before, [], (m) => (afterKeys.has(key(m)) ? undefined : "gone")), { class: "block" }),
    memory.truncated ? h("p", { class: "muted small" }, "the oldest memories were left out to fit the reply") : null,
  ], { class: "block" });
}
