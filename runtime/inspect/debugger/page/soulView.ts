/**
 * One soul: who and where it is now, its state chart, its timeline of turns, and its memory
 * panels. Live events for the soul refresh it (coalesced); a redraw replaces only what
 * changed and keeps open what the reader opened.
 */
import { api, ApiError } from "./api.ts";
import { badge, fact, h, replaceChildren, swapKeepingOpen } from "./dom.ts";
import { ago, clock, count, rate, tokens } from "./format.ts";
import { SIDE_PANELS } from "./memoryPanels.ts";
import { stateChart } from "./stateChart.ts";
import { Timeline } from "./timeline.ts";
import type { FleetEntry, SoulDetail } from "./types.ts";

export class SoulView {
  readonly root: HTMLElement;
  private readonly head = h("div", { class: "soul-head" });
  private readonly notice = h("div", { class: "notice", attrs: { role: "status" } });
  private readonly chartBox = h("div", { class: "chart-scroll" });
  private readonly aside = h("aside", { class: "soul-side" });
  private readonly timeline: Timeline;
  private detail: SoulDetail | null = null;
  private entry: FleetEntry | undefined;
  private chartSignature = "";
  private panelSignatures: string[] = [];
  private panels: HTMLElement[] = [];
  private refreshTimer: number | undefined;

  constructor(readonly id: string, entry: FleetEntry | undefined) {
    this.entry = entry;
    this.timeline = new Timeline(id, (turn) => void this.revert(turn));
    const chartPanel = h("section", { class: "panel chart-panel" },
      h("h3", null, "State chart"),
      this.chartBox,
      h("p", { class: "legend muted small" }, "Highlighted: the current process. Numbers: how often each transition was taken over the turns kept; dashed: declared, not taken. ISM states are drawn inside their process."));
    this.root = h("div", { class: "soul-view" },
      h("nav", { class: "crumbs" }, h("a", { attrs: { href: "#/" } }, "← fleet")),
      this.head, this.notice, chartPanel,
      h("div", { class: "soul-grid" }, this.timeline.root, this.aside));
    this.drawHead();
  }

  async load(): Promise<void> {
    try {
      await Promise.all([this.reloadDetail(), this.timeline.load()]);
    } catch (err) {
      this.say(err instanceof ApiError && err.status === 404 ? `No soul '${this.id}' in the cluster.` : (err as Error).message, "error");
    }
  }

  /** The soul's fleet entry changed. */
  onFleet(entry: FleetEntry): void {
    this.entry = entry;
    this.drawHead();
    this.drawChart();
  }

  /** Something happened to the soul (a turn, a transition, a revert): look again shortly. */
  onEvent(type: string): void {
    if (type === "revert") {
      void this.timeline.load().catch((err: Error) => this.say(err.message, "error"));
    }
    window.clearTimeout(this.refreshTimer);
    this.refreshTimer = window.setTimeout(() => void this.refresh(), 250);
  }

  destroy(): void {
    window.clearTimeout(this.refreshTimer);
    this.root.remove();
  }

  private async refresh(): Promise<void> {
    try {
      await Promise.all([this.reloadDetail(), this.timeline.refresh()]);
    } catch (err) {
      this.say((err as Error).message, "error");
    }
  }

  private async reloadDetail(): Promise<void> {
    this.detail = await api.soul(this.id);
    this.entry = this.detail.soul ?? this.entry;
    this.drawHead();
    this.drawChart();
    this.drawPanels();
  }

  private drawHead(): void {
    const e = this.entry;
    const log = this.detail?.turnLog;
    replaceChildren(this.head,
      h("h2", null, h("span", { class: "soul-id mono" }, this.id), e?.name ? h("span", { class: "soul-name" }, e.name) : null, e ? badge(e.status, e.status) : null),
      e ? h("div", { class: "facts" },
        fact("node", e.node), fact("process", e.process), fact("queue", count(e.pending)), fact("turns", count(e.turns)),
        fact("last turn", h("span", { title: clock(e.lastTurnAt) }, ago(e.lastTurnAt))), fact("turns/min", rate(e.turnsPerMinute)), fact("tokens", tokens(e.tokens))) : null,
      log ? h("div", { class: "muted small" }, `turn log keeps ${count(log.keep)} turns${log.oldest !== undefined ? `; kept now: ${log.oldest}–${log.newest}` : ""}`)
        : this.detail ? h("div", { class: "muted small" }, "the turn log is off: no timeline, no revert") : null);
  }

  private drawChart(): void {
    if (!this.detail) return;
    const current = this.entry?.process ?? this.detail.soul?.process;
    const signature = JSON.stringify([this.detail.machine, this.detail.transitions, current]);
    if (signature === this.chartSignature) return;
    this.chartSignature = signature;
    const machine = this.detail.machine;
    replaceChildren(this.chartBox,
      stateChart(machine, this.detail.transitions ?? {}, current),
      machine || Object.keys(this.detail.transitions ?? {}).length === 0 ? null : h("p", { class: "muted small" }, "The node sent no machine definition: the chart shows the processes and transitions the kept turns took."));
  }

  private drawPanels(): void {
    const detail = this.detail;
    if (!detail) return;
    SIDE_PANELS.forEach((p, i) => {
      const signature = p.signature(detail);
      if (signature === this.panelSignatures[i]) return;
      this.panelSignatures[i] = signature;
      const fresh = p.render(detail);
      if (this.panels[i]) swapKeepingOpen(this.panels[i], fresh);
      else this.aside.appendChild(fresh);
      this.panels[i] = fresh;
    });
  }

  private async revert(turn: number): Promise<void> {
    if (!window.confirm(`Roll ${this.id} back to the state after turn ${turn}?\n\nWorking memory, soul memory, process memory, process, schedules and user models go back; turn numbers go on.`)) return;
    try {
      const { revert } = await api.revert(this.id, turn);
      this.say(`Reverted: the state after turn ${revert.toTurn} is current again (was turn ${revert.turn}).`, "ok");
      await Promise.all([this.reloadDetail(), this.timeline.load()]);
    } catch (err) {
      this.say(`Revert failed: ${(err as Error).message}`, "error");
    }
  }

  private say(text: string, kind: "ok" | "error"): void {
    this.notice.replaceChildren(h("div", { class: `notice-${kind}` }, text));
  }
}
