/**
 * Small DOM helpers. Every piece of text goes in as a text node (textContent), never as HTML:
 * prompts, memories and perceptions hold what users wrote, so this file is the page's XSS
 * boundary. Nothing in the page sets innerHTML.
 */

export type Child = Node | string | number | null | undefined | false;

export interface Props {
  class?: string;
  title?: string;
  attrs?: Record<string, string>;
  on?: Partial<Record<keyof HTMLElementEventMap, (event: Event) => void>>;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** An element with a class, attributes, listeners and children (strings become text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props?.class) el.className = props.class;
  if (props?.title) el.title = props.title;
  for (const [name, value] of Object.entries(props?.attrs ?? {})) el.setAttribute(name, value);
  for (const [type, listener] of Object.entries(props?.on ?? {})) if (listener) el.addEventListener(type, listener);
  append(el, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element; attribute values are set as attributes, text as a text node. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  append(el, children);
  return el;
}

/** Replaces an element's children. */
export function replaceChildren(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** Text that keeps its line breaks and wraps anywhere (long messages, JSON). */
export function textBlock(text: string, className = ""): HTMLPreElement {
  return h("pre", { class: `text ${className}`.trim() }, text);
}

/** A value as readable text: a string as it is, anything else as indented JSON. */
export function show(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "(none)";
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A block collapsed behind a summary; `body` is built only when it is first opened. */
export function collapsible(summary: Child | Child[], body: () => Child | Child[], options: { open?: boolean; class?: string } = {}): HTMLDetailsElement {
  const details = h("details", { class: options.class ?? "" }, h("summary", null, ...(Array.isArray(summary) ? summary : [summary])));
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    const content = body();
    append(details, Array.isArray(content) ? content : [content]);
  };
  if (options.open) {
    details.open = true;
    build();
  }
  details.addEventListener("toggle", () => details.open && build());
  return details;
}

/** A small coloured label (status, verdict, kind). */
export function badge(text: string, kind: string, title?: string): HTMLSpanElement {
  return h("span", { class: `badge badge-${kind.replace(/[^a-z0-9-]/gi, "_")}`, ...(title ? { title } : {}) }, text);
}

/** A `name: value` pair for the small fact lines (model, tokens, latency). */
export function fact(name: string, value: Child): HTMLSpanElement {
  return h("span", { class: "fact" }, h("span", { class: "fact-name" }, name), " ", h("span", { class: "fact-value" }, value));
}

/**
 * Puts `fresh` in the place of `old`, opening the same <details> (by position) that were
 * open in it: a live redraw does not close what the reader opened.
 */
export function swapKeepingOpen(old: Element, fresh: Element): void {
  const wasOpen = [...old.querySelectorAll("details")].map((d) => d.open);
  old.replaceWith(fresh);
  fresh.querySelectorAll("details").forEach((d, i) => {
    if (wasOpen[i] && !d.open) d.open = true;
  });
}

/** Work the page starts and does not wait for: it reports its own failures; one it did not is logged, never unhandled. */
export function inBackground(work: Promise<unknown>): void {
  work.catch((err: unknown) => console.error("ensoul debugger:", err));
}
