/**
 * The soul's state chart as SVG: one box per process (an ISM child's states as small boxes
 * inside it), an arrow per transition labelled with how often it was taken, the current
 * process highlighted. Declared transitions never taken are dashed and unlabelled.
 */
import { BOX, chartModel, edgeGeometry, labelSpot, layout, type Box, type ChartEdge, type Point } from "./chartModel.ts";
import { h, svg } from "./dom.ts";

const MARGIN = 48;

/** Cuts a label to what fits in `width` pixels of 13 px text (the full name goes in a title). */
function fit(text: string, width: number, charWidth = 7.4): string {
  const max = Math.max(3, Math.floor(width / charWidth));
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function markers(): SVGDefsElement {
  const arrow = (id: string) =>
    svg("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse", markerUnits: "strokeWidth" },
      svg("path", { d: "M0,0 L10,5 L0,10 z", class: id === "arrow-taken" ? "arrowhead-taken" : "arrowhead-declared" }));
  return svg("defs", {}, arrow("arrow-taken"), arrow("arrow-declared"));
}

function label(x: number, y: number, text: string, className: string): SVGTextElement {
  return svg("text", { x, y, class: className, "text-anchor": "middle", "dominant-baseline": "central" }, text);
}

function edgeTitle(edge: ChartEdge): string {
  const events = edge.events.length ? ` on ${edge.events.join(", ")}` : "";
  const declared = edge.declared || edge.from === edge.to ? "" : " (not in the machine definition)";
  return `${edge.from} → ${edge.to}${events}: taken ${edge.count} time${edge.count === 1 ? "" : "s"}${declared}`;
}

/** One edge's line, and its count placed clear of the counts in `placed` (which it joins). */
function drawEdge(edge: ChartEdge, boxes: Map<string, Box>, placed: Point[]): { line: SVGGElement; count: SVGGElement | null } | null {
  const from = boxes.get(edge.from);
  const to = boxes.get(edge.to);
  if (!from || !to) return null;
  const taken = edge.count > 0;
  let d: string;
  let at: { x: number; y: number };
  if (from === to) {
    // A loop over the box's top edge.
    const top = from.y - from.h / 2;
    d = `M ${from.x - 28} ${top} C ${from.x - 34} ${top - 44}, ${from.x + 34} ${top - 44}, ${from.x + 28} ${top - 3}`;
    at = { x: from.x, y: top - 42 };
  } else {
    const g = edgeGeometry(from, to);
    d = `M ${g.start.x} ${g.start.y} Q ${g.control.x} ${g.control.y} ${g.end.x} ${g.end.y}`;
    at = taken ? labelSpot(g, placed, [...boxes.values()]) : g.control;
  }
  if (taken) placed.push(at);
  const path = svg("path", { d, class: taken ? "edge edge-taken" : "edge edge-declared", "marker-end": `url(#${taken ? "arrow-taken" : "arrow-declared"})` });
  const data = { "data-edge": `${edge.from}->${edge.to}` };
  const line = svg("g", { class: "edge-group", ...data }, svg("title", {}, edgeTitle(edge)), path);
  const count = taken ? svg("g", { class: "edge-label", ...data }, svg("title", {}, edgeTitle(edge)), label(at.x, at.y, String(edge.count), "edge-count")) : null;
  return { line, count };
}

function drawChildren(box: Box, initial: string | undefined): SVGGElement {
  const group = svg("g", { class: "ism-children" });
  const left = box.x - box.w / 2 + BOX.gap;
  const top = box.y - box.h / 2 + BOX.h - 6;
  box.process.children.forEach((child, i) => {
    const x = left + (i % 2) * (box.childW + BOX.gap);
    const y = top + Math.floor(i / 2) * (BOX.childH + BOX.gap);
    group.appendChild(svg("g", { class: child === initial ? "ism-state ism-initial" : "ism-state", "data-child": child },
      svg("title", {}, `${box.process.name} ISM state: ${child}${child === initial ? " (initial)" : ""}`),
      svg("rect", { x, y, width: box.childW, height: BOX.childH, rx: 4 }),
      label(x + box.childW / 2, y + BOX.childH / 2, fit(child, box.childW - 6, BOX.childChar), "ism-label")));
  });
  return group;
}

function drawBox(box: Box, current: string | undefined, initial: string | undefined): SVGGElement {
  const { process } = box;
  const isCurrent = process.name === current;
  const classes = ["process", isCurrent ? "current" : "", process.children.length ? "has-ism" : ""].filter(Boolean).join(" ");
  const left = box.x - box.w / 2;
  const top = box.y - box.h / 2;
  const title = `${process.name}${isCurrent ? " (current)" : ""}${process.name === initial ? " (initial)" : ""}${process.description ? `\n${process.description}` : ""}`;
  const ism = process.children.length > 0;
  const nameY = ism ? top + 17 : box.y;
  // An ISM process names itself on the left of its header, its "ISM" tag on the right.
  const name = ism
    ? svg("text", { x: left + 8, y: nameY, class: "process-label", "text-anchor": "start", "dominant-baseline": "central" }, fit(process.name, box.w - 44))
    : label(box.x, nameY, fit(process.name, box.w - 16), "process-label");
  const group = svg("g", { class: classes, "data-process": process.name },
    svg("title", {}, title),
    svg("rect", { x: left, y: top, width: box.w, height: box.h, rx: 8 }),
    name);
  if (ism) {
    group.appendChild(svg("text", { x: left + box.w - 8, y: nameY, class: "ism-tag", "text-anchor": "end", "dominant-baseline": "central" }, "ISM"));
    group.appendChild(drawChildren(box, process.childInitial));
  }
  if (process.name === initial) {
    // The way in: a dot and a short arrow into the top-left corner.
    group.appendChild(svg("circle", { cx: left - 16, cy: top - 16, r: 4, class: "initial-dot" }));
    group.appendChild(svg("path", { d: `M ${left - 13} ${top - 13} L ${left - 1} ${top - 1}`, class: "edge edge-taken", "marker-end": "url(#arrow-taken)" }));
  }
  return group;
}

/** The chart for a machine, its counted transitions and the current process. */
export function stateChart(machine: unknown, transitions: Record<string, number>, current: string | undefined): Element {
  const model = chartModel(machine, transitions);
  if (model.processes.length === 0) return h("p", { class: "muted" }, "No machine definition to draw.");
  const boxes = layout(model);
  const byName = new Map(boxes.map((b) => [b.process.name, b]));
  const minX = Math.min(...boxes.map((b) => b.x - b.w / 2)) - MARGIN;
  const maxX = Math.max(...boxes.map((b) => b.x + b.w / 2)) + MARGIN;
  const minY = Math.min(...boxes.map((b) => b.y - b.h / 2)) - MARGIN - 12;
  const maxY = Math.max(...boxes.map((b) => b.y + b.h / 2)) + MARGIN;
  const width = maxX - minX;
  const height = maxY - minY;
  const chart = svg("svg", {
    class: "state-chart", viewBox: `${minX} ${minY} ${width} ${height}`, width, height,
    role: "img", "aria-label": `state chart of ${model.id}: ${model.processes.length} processes, current ${current ?? "unknown"}`,
  }, markers());
  const placed: Point[] = [];
  // Self-loops first: their counts cannot move, the others make way.
  const ordered = [...model.edges].sort((a, b) => Number(b.from === b.to) - Number(a.from === a.to));
  const drawn = ordered.map((edge) => drawEdge(edge, byName, placed));
  // Lines under the boxes, counts over them: a count is never hidden under a box.
  chart.appendChild(svg("g", { class: "edges" }, ...drawn.map((d) => d?.line)));
  chart.appendChild(svg("g", { class: "boxes" }, ...boxes.map((b) => drawBox(b, current, model.initial))));
  chart.appendChild(svg("g", { class: "edge-counts" }, ...drawn.map((d) => d?.count)));
  return chart;
}
