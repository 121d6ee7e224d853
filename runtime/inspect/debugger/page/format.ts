/** How numbers and times read on the page. */
import type { TokenCount } from "./types.ts";

const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });

export function count(n: number | undefined): string {
  return typeof n === "number" && Number.isFinite(n) ? integer.format(n) : "–";
}

export function rate(n: number | undefined): string {
  return typeof n === "number" && Number.isFinite(n) ? decimal.format(n) : "–";
}

/** `1,200 in / 340 out`. */
export function tokens(t: TokenCount | undefined): string {
  if (!t) return "–";
  return `${count(t.input)} in / ${count(t.output)} out`;
}

export function tokenTotal(t: TokenCount | undefined): number {
  return t ? (t.input ?? 0) + (t.output ?? 0) : 0;
}

/** `12 s ago`, `4 min ago`, `3 h ago`, `2 d ago`. */
export function ago(at: number | undefined, now = Date.now()): string {
  if (typeof at !== "number") return "never";
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** Local date and time to the second, for titles and turn heads. */
export function clock(at: number | undefined): string {
  if (typeof at !== "number") return "–";
  const d = new Date(at);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function ms(n: number | undefined): string {
  if (typeof n !== "number") return "–";
  return n < 1000 ? `${Math.round(n)} ms` : `${decimal.format(n / 1000)} s`;
}
