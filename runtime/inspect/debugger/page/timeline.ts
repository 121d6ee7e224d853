/**
 * A soul's timeline: committed turns newest first, a page at a time ("older turns" loads the
 * next), the reverts made between them, and the perceptions whose turn failed. New turns are
 * put on top as they come (refresh()); nothing already drawn is rebuilt.
 */
import { api } from "./api.ts";
import { badge, collapsible, fact, h, show, textBlock } from "./dom.ts";
import { clock, count, ms } from "./format.ts";
import { memoryPart, perceptionPart, proposalsPart, silencePart, stepPart, whispersPart } from "./turnParts.ts";
import type { FailedPerception, Revert, Turn, TurnsReply } from "./types.ts";

const PAGE = 20;

function processLine(turn: Turn): HTMLElement {
  const { from, to, path } = turn.process;
  const moved = from !== to;
  return h("span", { class: moved ? "transition moved" : "transition", title: `path: ${path.join(" › ")}` },
    moved ? `${from} → ${to}` : `${to}`);
}

function kvPart(kv: Turn["kv"]): HTMLElement | null {
  if (kv.length === 0) return null;
  return collapsible(h("span", { class: "label" }, `stored: ${kv.length} key${kv.length === 1 ? "" : "s"}`),
    () => h("ul", { class: "kv" }, ...kv.map((e) => h("li", null, h("div", { class: "mono small" }, `${e.namespace} / ${e.key.join(" / ")}`), textBlock(show(e.value))))),
    { class: "block" });
}

export class Timeline {
  readonly root: HTMLElement;
  private readonly list = h("div", { class: "turns" });
  private readonly failedBox = h("div", { class: "failed-box" });
  private readonly more: HTMLButtonElement;
  private readonly cards = new Map<string, HTMLElement>();
  private readonly revertsShown = new Set<string>();
  private next: number | undefined;
  private newest = 0;
  /** The turn whose state the soul has now: the newest, or the one the latest revert since it went back to. */
  private current = 0;
  private refreshing: Promise<void> | null = null;

  constructor(private readonly soulId: string, private readonly onRevert: (turn: number) => void) {
    this.more = h("button", { class: "more", on: { click: () => void this.loadOlder() } }, "older turns");
    this.root = h("section", { class: "panel timeline" }, h("h3", null, "Timeline ", h("span", { class: "muted" }, "(newest first)")), this.failedBox, this.list, this.more);
  }

  async load(): Promise<void> {
    this.cards.clear();
    this.revertsShown.clear();
    this.list.replaceChildren();
    this.failedBox.replaceChildren();
    this.newest = 0;
    const page = await api.turns(this.soulId, { limit: PAGE });
    this.add(page, "bottom", true);
    if (page.turns.length === 0) this.list.appendChild(h("p", { class: "muted empty" }, "No committed turn is kept for this soul (yet)."));
  }

  /** Puts the turns committed since the last look on top. */
  refresh(): Promise<void> {
    this.refreshing ??= api.turns(this.soulId, { limit: PAGE })
      .then((page) => {
        // Nothing in common with what is drawn (more than a page came, or a revert): start over.
        const gap = this.cards.size > 0 && page.turns.length > 0 && !page.turns.some((t) => this.cards.has(t.turnId));
        return gap ? this.load() : this.add(page, "top", true);
      })
      .finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async loadOlder(): Promise<void> {
    if (this.next === undefined) return;
    this.more.disabled = true;
    try {
      this.add(await api.turns(this.soulId, { before: this.next, limit: PAGE }), "bottom", false);
    } finally {
      this.more.disabled = false;
    }
  }

  /** `newestPage`: the page of the newest turns (asked for without `before`), whose reverts say which state is current. */
  private add(page: TurnsReply, where: "top" | "bottom", newestPage: boolean): void {
    const fresh = page.turns.filter((t) => !this.cards.has(t.turnId));
    if (fresh.length > 0) this.list.querySelector(".empty")?.remove();
    this.newest = Math.max(this.newest, ...page.turns.filter((t) => t.kind === "turn").map((t) => t.turn));
    if (newestPage) {
      // A revert made after the newest turn put the soul back to another turn's state: that one is current.
      const since = (page.reverts ?? []).filter((r) => r.turn >= this.newest).sort((a, b) => b.at - a.at)[0];
      this.current = since?.toTurn ?? this.newest;
    }
    const cards = fresh.map((t) => {
      const card = this.card(t);
      this.cards.set(t.turnId, card);
      return card;
    });
    if (where === "top") this.list.prepend(...cards);
    else this.list.append(...cards);
    if (where === "bottom" || this.next === undefined) this.next = page.next;
    this.more.hidden = this.next === undefined;
    for (const revert of page.reverts ?? []) this.showRevert(revert);
    this.showFailed(page.failed ?? []);
    for (const button of this.list.querySelectorAll<HTMLButtonElement>("button.revert")) button.disabled = Number(button.dataset["turn"]) === this.current;
  }

  private card(turn: Turn): HTMLElement {
    const head = h("header", { class: "turn-head" },
      h("span", { class: "turn-no" }, `turn ${turn.turn}`),
      turn.kind === "subprocess" ? badge("subprocess", "subprocess") : null,
      processLine(turn),
      turn.answered ? badge("answered", "answered") : badge("no answer", "silent", turn.silence?.detail),
      h("span", { class: "turn-time", title: turn.turnId }, clock(turn.at)),
      turn.durationMs !== undefined ? fact("took", ms(turn.durationMs)) : null,
      turn.kind === "turn" ? this.revertButton(turn.turn) : null);
    return h("article", { class: `turn${turn.answered ? "" : " unanswered"}`, attrs: { "data-turn": String(turn.turn), "data-turn-id": turn.turnId } },
      head,
      silencePart(turn),
      perceptionPart(turn.perception),
      whispersPart(turn.whispers ?? []),
      turn.steps.length ? h("ol", { class: "steps" }, ...turn.steps.map(stepPart)) : h("div", { class: "muted small" }, "no cognitive step"),
      proposalsPart(turn.proposals ?? []),
      memoryPart(turn.memory),
      kvPart(turn.kv ?? []),
      turn.state ? collapsible(h("span", { class: "label" }, "state after this turn"), () => textBlock(show(turn.state)), { class: "block" }) : null);
  }

  private revertButton(turn: number): HTMLButtonElement {
    return h("button", {
      class: "revert", title: `roll the soul back to the state after turn ${turn}`, attrs: { "data-turn": String(turn) },
      on: { click: () => this.onRevert(turn) },
    }, "Revert here");
  }

  private showRevert(revert: Revert): void {
    const key = `${revert.turn}:${revert.toTurn}:${revert.at}`;
    if (this.revertsShown.has(key)) return;
    this.revertsShown.add(key);
    const marker = h("div", { class: "revert-marker" }, `↶ reverted after turn ${revert.turn} to the state after turn ${revert.toTurn}, by ${revert.by}, ${clock(revert.at)}`);
    const after = this.list.querySelector(`article[data-turn="${CSS.escape(String(revert.turn))}"]`);
    if (after) after.before(marker);
    else this.list.prepend(marker);
  }

  private showFailed(failed: FailedPerception[]): void {
    if (failed.length === 0) return;
    this.failedBox.replaceChildren(h("div", { class: "failed" },
      h("div", { class: "label" }, `perceptions whose turn failed (${count(failed.length)})`),
      h("ul", null, ...failed.map((f) => h("li", { class: "failed-item" },
        h("div", { class: "error-line" }, f.error ?? "failed", h("span", { class: "muted" }, ` — after ${f.attempts} attempt${f.attempts === 1 ? "" : "s"}`)),
        perceptionPart(f.perception as Record<string, unknown> | undefined))))));
  }
}
