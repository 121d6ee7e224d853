/**
 * The fleet: one table row per soul of the cluster, built once and then updated cell by cell
 * on `fleet` events, so a few hundred souls stay fast. Filter by text (every word must
 * match), sort by any column (click its header; again to reverse).
 */
import { badge, h } from "./dom.ts";
import { ago, clock, count, rate, tokenTotal, tokens } from "./format.ts";
import { soulHref } from "./router.ts";
import type { FleetEntry } from "./types.ts";

interface Column {
  key: string;
  label: string;
  title: string;
  numeric?: boolean;
  sortValue(e: FleetEntry): string | number;
  render(e: FleetEntry, cell: HTMLTableCellElement, now: number): void;
}

/** Sets a cell's text only when it changed (no layout work for an unchanged cell). */
function setText(cell: HTMLElement, text: string, title?: string): void {
  if (cell.textContent !== text) cell.textContent = text;
  if (title !== undefined && cell.title !== title) cell.title = title;
}

const text = (pick: (e: FleetEntry) => string) => (e: FleetEntry, cell: HTMLTableCellElement) => setText(cell, pick(e));

const COLUMNS: Column[] = [
  {
    key: "id", label: "id", title: "the soul's id (click to open it)", sortValue: (e) => e.id,
    render: (e, cell) => {
      if (cell.firstChild) return;
      cell.appendChild(h("a", { class: "soul-id", attrs: { href: soulHref(e.id) } }, e.id));
    },
  },
  { key: "name", label: "name", title: "display name (two souls may share one)", sortValue: (e) => e.name ?? "", render: text((e) => e.name ?? "") },
  { key: "node", label: "node", title: "the node hosting the soul", sortValue: (e) => e.node, render: text((e) => e.node) },
  { key: "process", label: "process", title: "current mental process", sortValue: (e) => e.process, render: text((e) => e.process) },
  {
    key: "status", label: "status", title: "active, running, passivated, stopped, expired or down", sortValue: (e) => e.status,
    render: (e, cell) => {
      if (cell.textContent === e.status) return;
      cell.replaceChildren(badge(e.status, e.status));
    },
  },
  { key: "pending", label: "queue", title: "perceptions waiting", numeric: true, sortValue: (e) => e.pending, render: text((e) => count(e.pending)) },
  { key: "turns", label: "turns", title: "turns taken", numeric: true, sortValue: (e) => e.turns, render: text((e) => count(e.turns)) },
  {
    key: "lastTurnAt", label: "last turn", title: "when the last turn ended", numeric: true, sortValue: (e) => e.lastTurnAt ?? 0,
    render: (e, cell, now) => setText(cell, ago(e.lastTurnAt, now), e.lastTurnAt ? clock(e.lastTurnAt) : "no turn since the node started"),
  },
  { key: "turnsPerMinute", label: "turns/min", title: "turns per minute", numeric: true, sortValue: (e) => e.turnsPerMinute, render: text((e) => rate(e.turnsPerMinute)) },
  {
    key: "tokens", label: "tokens", title: "model tokens since the node started (input / output)", numeric: true, sortValue: (e) => tokenTotal(e.tokens),
    render: (e, cell) => setText(cell, count(tokenTotal(e.tokens)), tokens(e.tokens)),
  },
];

interface Row {
  entry: FleetEntry;
  tr: HTMLTableRowElement;
  cells: HTMLTableCellElement[];
}

function searchText(e: FleetEntry): string {
  return [e.id, e.name ?? "", e.node, e.process, e.status].join(" ").toLowerCase();
}

export class FleetView {
  readonly root: HTMLElement;
  private readonly rows = new Map<string, Row>();
  private readonly body = h("tbody", null);
  private readonly headers: HTMLTableCellElement[] = [];
  private readonly summary = h("span", { class: "fleet-summary", attrs: { "aria-live": "polite" } });
  private readonly filterInput: HTMLInputElement;
  private sortKey = "id";
  private sortDir = 1;
  private words: string[] = [];

  constructor() {
    this.filterInput = h("input", {
      class: "filter",
      attrs: { type: "search", placeholder: "filter: id, name, node, process, status", "aria-label": "filter souls" },
      on: { input: () => this.setFilter(this.filterInput.value) },
    });
    const head = h("tr", null, ...COLUMNS.map((c) => this.header(c)));
    const table = h("table", { class: "fleet" }, this.colgroup(), h("thead", null, head), this.body);
    this.root = h("section", { class: "fleet-view" },
      h("div", { class: "toolbar" }, this.filterInput, this.summary),
      h("div", { class: "table-scroll" }, table));
    this.markSorted();
  }

  private colgroup(): HTMLTableColElement {
    const widths: Record<string, string> = { id: "16%", name: "12%", node: "9%", process: "12%", status: "10%", pending: "6%", turns: "7%", lastTurnAt: "10%", turnsPerMinute: "8%", tokens: "10%" };
    return h("colgroup", null, ...COLUMNS.map((c) => h("col", { attrs: { style: `width:${widths[c.key]}` } })));
  }

  private header(c: Column): HTMLTableCellElement {
    const button = h("button", { class: "sort", title: `${c.title}; click to sort`, on: { click: () => this.sortBy(c.key) } }, c.label);
    const th = h("th", { class: c.numeric ? "num" : "", attrs: { scope: "col", "data-key": c.key } }, button);
    this.headers.push(th);
    return th;
  }

  /** The whole fleet (first load, and after the live stream reconnects). */
  setFleet(souls: FleetEntry[]): void {
    const seen = new Set(souls.map((s) => s.id));
    for (const [id, row] of this.rows) {
      if (seen.has(id)) continue;
      row.tr.remove();
      this.rows.delete(id);
    }
    for (const soul of souls) this.upsert(soul, false);
    this.applySort();
    this.refreshSummary();
  }

  /** One soul's entry changed (a `fleet` event). */
  update(entry: FleetEntry): void {
    this.upsert(entry, true);
    this.applySort();
    this.refreshSummary();
  }

  entry(id: string): FleetEntry | undefined {
    return this.rows.get(id)?.entry;
  }

  /** Ages the "last turn" cells (called every few seconds). */
  tick(): void {
    const now = Date.now();
    const index = COLUMNS.findIndex((c) => c.key === "lastTurnAt");
    for (const row of this.rows.values()) COLUMNS[index].render(row.entry, row.cells[index], now);
  }

  private upsert(entry: FleetEntry, flash: boolean): void {
    let row = this.rows.get(entry.id);
    if (!row) {
      const cells = COLUMNS.map((c) => h("td", { class: c.numeric ? "num" : `col-${c.key}` }));
      row = { entry, tr: h("tr", { attrs: { "data-soul": entry.id } }, ...cells), cells };
      this.rows.set(entry.id, row);
      this.body.appendChild(row.tr);
    }
    row.entry = entry;
    const now = Date.now();
    COLUMNS.forEach((c, i) => c.render(entry, row.cells[i], now));
    row.tr.hidden = !this.matches(entry);
    if (flash) row.tr.animate([{ backgroundColor: "var(--flash)" }, { backgroundColor: "transparent" }], { duration: 1500 });
  }

  private setFilter(value: string): void {
    this.words = value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const row of this.rows.values()) row.tr.hidden = !this.matches(row.entry);
    this.refreshSummary();
  }

  private matches(entry: FleetEntry): boolean {
    if (this.words.length === 0) return true;
    const haystack = searchText(entry);
    return this.words.every((w) => haystack.includes(w));
  }

  private sortBy(key: string): void {
    const column = COLUMNS.find((c) => c.key === key);
    if (this.sortKey === key) this.sortDir = -this.sortDir;
    else [this.sortKey, this.sortDir] = [key, column?.numeric ? -1 : 1];
    this.markSorted();
    this.applySort();
  }

  private markSorted(): void {
    for (const th of this.headers) {
      const sorted = th.dataset["key"] === this.sortKey;
      th.setAttribute("aria-sort", sorted ? (this.sortDir > 0 ? "ascending" : "descending") : "none");
    }
  }

  /** Puts the rows in order, moving rows only when the order changed. */
  private applySort(): void {
    const column = COLUMNS.find((c) => c.key === this.sortKey) ?? COLUMNS[0];
    const rows = [...this.rows.values()].sort((a, b) => {
      const x = column.sortValue(a.entry);
      const y = column.sortValue(b.entry);
      const byValue = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return this.sortDir * byValue || a.entry.id.localeCompare(b.entry.id);
    });
    const current = this.body.children;
    if (rows.length === current.length && rows.every((r, i) => current[i] === r.tr)) return;
    this.body.append(...rows.map((r) => r.tr));
  }

  private refreshSummary(): void {
    const all = [...this.rows.values()];
    const shown = all.filter((r) => !r.tr.hidden).length;
    const byStatus = new Map<string, number>();
    for (const r of all) byStatus.set(r.entry.status, (byStatus.get(r.entry.status) ?? 0) + 1);
    const statuses = [...byStatus].sort((a, b) => b[1] - a[1]).map(([s, n]) => `${n} ${s}`).join(" · ");
    this.summary.textContent = `${shown === all.length ? `${all.length} souls` : `${shown} of ${all.length} souls`}${statuses ? ` — ${statuses}` : ""}`;
  }
}
