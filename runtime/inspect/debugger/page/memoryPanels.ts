/** The soul's side panels: working memory now, soul memory, process memory, schedules, user models. */
import { badge, collapsible, h, show, textBlock } from "./dom.ts";
import { clock, count } from "./format.ts";
import { memoryByRegion } from "./turnParts.ts";
import type { SoulDetail, UserModelVersion } from "./types.ts";

function panel(title: string, ...body: (Node | null)[]): HTMLElement {
  return h("section", { class: "panel side" }, h("h3", null, title), ...body);
}

function empty(text = "empty"): HTMLElement {
  return h("p", { class: "muted" }, text);
}

function keyValues(record: Record<string, unknown>): HTMLElement {
  const entries = Object.entries(record ?? {});
  if (entries.length === 0) return empty();
  return h("dl", { class: "kv-list" }, ...entries.flatMap(([k, v]) => [h("dt", null, k), h("dd", null, textBlock(show(v)))]));
}

function workingMemoryPanel(detail: SoulDetail): HTMLElement {
  const wm = detail.workingMemory;
  const memories = wm?.memories ?? [];
  return panel("Working memory",
    collapsible(h("span", { class: "label" }, `${count(memories.length)} memories${wm?.soulName ? ` of ${wm.soulName}` : ""}`), () => memoryByRegion(memories, wm?.regionOrder ?? []), { class: "block" }),
    detail.truncated ? h("p", { class: "muted small" }, "the oldest memories were left out to fit the reply") : null);
}

function processMemoryPanel(detail: SoulDetail): HTMLElement {
  const entries = Object.entries(detail.processMemory ?? {});
  return panel("Process memory", entries.length === 0 ? empty() : h("div", null, ...entries.map(([process, values]) =>
    collapsible(h("span", { class: "label" }, `${process} (${values.length})`), () => textBlock(show(values)), { class: "block" }))));
}

function schedulesPanel(detail: SoulDetail): HTMLElement {
  const schedules = detail.schedules ?? [];
  return panel("Schedules", schedules.length === 0 ? empty("nothing scheduled") : h("ul", { class: "schedules" }, ...schedules.map((s) =>
    h("li", null, h("div", null, h("strong", null, clock(s.at)), s.process ? ` → ${s.process}` : ""), h("div", { class: "mono small muted" }, s.id),
      s.perception !== undefined ? collapsible(h("span", { class: "label small" }, "perception"), () => textBlock(show(s.perception)), { class: "block" }) : null))));
}

/** A version's text, note and time, by the names of docs/DEBUGGER.md or of the store (markdown, changeNote, ts). */
function versionParts(v: UserModelVersion): { text: unknown; note?: string; at?: number } {
  const { version: _version, model, markdown, note, changeNote, at, ts, ...rest } = v;
  const text = model ?? markdown ?? (Object.keys(rest).length ? rest : undefined);
  const noteText = typeof note === "string" ? note : typeof changeNote === "string" ? changeNote : undefined;
  const time = typeof at === "number" ? at : typeof ts === "number" ? ts : undefined;
  return { text, ...(noteText !== undefined ? { note: noteText } : {}), ...(time !== undefined ? { at: time } : {}) };
}

function userModelsPanel(detail: SoulDetail): HTMLElement {
  const models = detail.userModels ?? [];
  return panel("User models", models.length === 0 ? empty("none") : h("div", null, ...models.map((m) => {
    const versions = [...(m.versions ?? [])].sort((a, b) => b.version - a.version);
    return h("div", { class: "user-model" }, h("div", { class: "user-id" }, m.userId, h("span", { class: "muted" }, ` — ${versions.length} version${versions.length === 1 ? "" : "s"}`)),
      h("ol", { class: "versions" }, ...versions.map((v, i) => {
        const parts = versionParts(v);
        return h("li", null,
          h("div", { class: "version-head" }, badge(`v${v.version}`, i === 0 ? "current-version" : "version"), " ", parts.at ? clock(parts.at) : ""),
          parts.note ? h("div", { class: "note" }, parts.note) : null,
          parts.text === undefined ? null : collapsible(h("span", { class: "label small" }, "model"), () => textBlock(show(parts.text)), { class: "block", open: i === 0 }));
      })));
  })));
}

export interface SidePanel {
  /** What the panel shows, as text: the panel is redrawn only when this changes. */
  signature(detail: SoulDetail): string;
  render(detail: SoulDetail): HTMLElement;
}

/** Every side panel for one soul, in reading order. */
export const SIDE_PANELS: SidePanel[] = [
  { signature: (d) => JSON.stringify([d.workingMemory, d.truncated]), render: workingMemoryPanel },
  { signature: (d) => JSON.stringify(d.soulMemory), render: (d) => panel("Soul memory", keyValues(d.soulMemory)) },
  { signature: (d) => JSON.stringify(d.processMemory), render: processMemoryPanel },
  { signature: (d) => JSON.stringify(d.schedules), render: schedulesPanel },
  { signature: (d) => JSON.stringify(d.userModels), render: userModelsPanel },
];
