/**
 * The debugger page's load, in headless Chromium, against a real node (in-process bus, LMDB
 * without fsync) hosting 200 souls, one of which ("heavy") has 1,000 committed turns in its
 * turn log (runtime.turnLog.keep 1,000):
 *
 * - the fleet: from navigation start until all 200 rows are in the table and painted;
 * - the heavy soul's page (`#/souls/heavy`, opened directly): until its newest turn is in the
 *   timeline and the state chart is drawn, and painted;
 * - the API under them: `GET /api/souls/heavy/turns` (default limit, 20 turns) time and size,
 *   `GET /api/souls/heavy` and `GET /api/souls`.
 *
 * Each page is loaded RUNS times in a new tab (after WARMUP loads that are not counted); the
 * page's own `performance.now()` (0 = navigation start) is read when a MutationObserver,
 * installed before the page's script runs, first sees the condition hold ("in the DOM"), and
 * again in a task after the next animation frame ("painted"). The heavy soul keeps a window of
 * 100 memories (as a long-lived soul trims its working memory), each turn one model step whose
 * prompt is that window, so a turn in the log is the size a real one is.
 *
 * Needs /usr/bin/chromium (`apt-get install -y chromium`); without it the page rows are
 * replaced by one row saying so, and the API rows are still measured.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Browser } from "playwright-core";
import { defineSoul, useActions, useSoulMemory, type MentalProcess } from "../../actors/soul/index.ts";
import { externalDialog } from "../../runtime/cognition/index.ts";
import { startDebugger, type DebuggerHandle } from "../../runtime/inspect/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../runtime/node/index.ts";
import { ModelRegistry } from "../../runtime/providers/index.ts";
import { chromiumMissing, INSTALL_CHROMIUM, launchChromium } from "../support/browser.ts";
import { until } from "../support/cluster/busWatch.ts";
import { echoSoul } from "../support/cluster/blueprints.ts";
import { perceive } from "../support/cluster/clusterKit.ts";
import { countingModel } from "../support/operations/countingModel.ts";
import { percentile, type BenchRow } from "./BenchRow.ts";

const SOULS = 200;
const TURNS = 1_000;
const WINDOW = 100;
/** Perceptions published before waiting for their turns. */
const BATCH = 100;
const WARMUP = 2;
const RUNS = 9;
const API_RUNS = 30;
const HEAVY = "heavy";

const sentence = (i: number) => `Message ${i}: the user talks about their week, the deadline on Friday and the trip they keep postponing.`;
const ANSWER = "That sounds like a full week. What would make Friday easier for you, and when could the trip finally happen?";

/** Keeps its persona and the last WINDOW - 1 memories; counts what it heard; answers through one model step. */
const talk: MentalProcess = async ({ workingMemory }) => {
  const heard = useSoulMemory<number>("heard", 0);
  heard.current += 1;
  const window = workingMemory.length > WINDOW - 2 ? workingMemory.slice(0, 1).concat(workingMemory.slice(-(WINDOW - 3))) : workingMemory;
  const [memory, reply] = await externalDialog(window, "Answer briefly.", { model: "fake:talk" });
  useActions().speak(reply);
  return memory;
};
const heavySoul = defineSoul({ name: "Heavy", persona: "A soul with a long history.", initialProcess: talk, processes: { talk } });

/** Installed before the page's script: records when each condition first holds, in the DOM and painted. */
const WATCH = `(() => {
  const conditions = {
    fleet: () => document.querySelectorAll("table.fleet tbody tr").length === ${SOULS},
    soul: () => document.querySelector('article.turn[data-turn="${TURNS}"]') !== null && document.querySelector("svg.state-chart g.process") !== null,
  };
  const marks = (window.__benchMarks = {});
  new MutationObserver(() => {
    for (const [name, holds] of Object.entries(conditions)) {
      if (marks[name] !== undefined || !holds()) continue;
      const mark = (marks[name] = { dom: performance.now() });
      requestAnimationFrame(() => setTimeout(() => (mark.painted = performance.now()), 0));
    }
  }).observe(document, { childList: true, subtree: true });
})();`;

interface Mark {
  dom: number;
  painted: number;
}

async function loadTimes(browser: Browser, url: string, mark: "fleet" | "soul"): Promise<{ dom: number[]; painted: number[] }> {
  const dom: number[] = [];
  const painted: number[] = [];
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript(WATCH);
  try {
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const page = await context.newPage();
      await page.goto(url);
      const handle = await page.waitForFunction((name) => {
        const found = (globalThis as unknown as { __benchMarks?: Record<string, Partial<Mark>> }).__benchMarks?.[name];
        return found?.painted !== undefined && found;
      }, mark, { timeout: 60_000 });
      const m = (await handle.jsonValue()) as Mark;
      await page.close();
      if (i >= WARMUP) (dom.push(m.dom), painted.push(m.painted));
    }
  } finally {
    await context.close();
  }
  return { dom, painted };
}

async function timeGet(url: string): Promise<{ ms: number[]; bytes: number; body: unknown }> {
  const ms: number[] = [];
  let bytes = 0;
  let body: unknown;
  for (let i = 0; i < WARMUP + API_RUNS; i++) {
    const start = performance.now();
    const res = await fetch(url);
    const buf = Buffer.from(await res.arrayBuffer());
    const took = performance.now() - start;
    if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status} ${buf.toString("utf8").slice(0, 200)}`);
    if (i >= WARMUP) ms.push(took);
    bytes = buf.length;
    body = JSON.parse(buf.toString("utf8"));
  }
  return { ms, bytes, body };
}

/** Drives TURNS perceptions through the heavy soul, BATCH at a time; resolves with the seconds it took. */
async function fill(node: EnsoulNode): Promise<number> {
  const start = performance.now();
  const soul = await node.soul(HEAVY);
  for (let sent = 0; sent < TURNS; ) {
    const batch = Math.min(BATCH, TURNS - sent);
    for (let i = 0; i < batch; i++) await perceive(node.bus, HEAVY, sentence(sent + i + 1), { name: "Ada" });
    sent += batch;
    await until(() => soul.state().turn >= sent, 120_000, `${HEAVY}'s turn ${sent}`);
  }
  return (performance.now() - start) / 1000;
}

export async function run(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "ensoul-bench-debugger-"));
  const config = parseClusterConfig({
    cluster: "benchdebug",
    providers: { default: "fake:talk" },
    souls: [{ id: HEAVY, blueprint: heavySoul }, ...Array.from({ length: SOULS - 1 }, (_, i) => ({ id: `echo-${String(i + 1).padStart(3, "0")}`, blueprint: echoSoul }))],
    runtime: { turnLog: { keep: TURNS } },
  });
  let node: EnsoulNode | undefined;
  let debug: DebuggerHandle | undefined;
  let browser: Browser | undefined;
  try {
    node = await startNode({ config, data: dir, store: { noSync: true }, registry: new ModelRegistry().register("fake", countingModel("fake", ANSWER)), log: () => undefined });
    const seconds = await fill(node);
    process.stderr.write(`bench: debugger: ${TURNS} turns of '${HEAVY}' committed in ${seconds.toFixed(1)} s\n`);
    debug = await startDebugger({ bus: node.bus, port: 0, nodes: [node.id] });
    const api = (path: string) => new URL(path, debug!.url).href;
    // The fleet is asked of the node at start; wait for it whole before timing anything.
    for (const start = Date.now(); ((await (await fetch(api("/api/souls"))).json()) as { souls: unknown[] }).souls.length < SOULS; ) {
      if (Date.now() - start > 10_000) throw new Error(`the debugger's fleet never listed ${SOULS} souls`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const turns = await timeGet(api(`/api/souls/${HEAVY}/turns`));
    const reply = turns.body as { turns: { turn: number }[]; next?: number };
    if (reply.turns[0]?.turn !== TURNS) throw new Error(`the newest turn of '${HEAVY}' is ${reply.turns[0]?.turn}, not ${TURNS}`);
    const detail = await timeGet(api(`/api/souls/${HEAVY}`));
    const fleet = await timeGet(api("/api/souls"));
    if ((fleet.body as { souls: unknown[] }).souls.length !== SOULS) throw new Error(`the fleet lists ${(fleet.body as { souls: unknown[] }).souls.length} souls, not ${SOULS}`);
    const rows: BenchRow[] = [
      { name: `turns committed by one soul while filling its log (${TURNS} turns, keep ${TURNS}, one model step each)`, value: TURNS / seconds, unit: "turns/s" },
      { name: `GET /api/souls/:id/turns p50, default limit 20 (${reply.turns.length} fit the reply; ${WINDOW}-memory window)`, value: percentile(turns.ms, 50), unit: "ms" },
      { name: "GET /api/souls/:id/turns response size", value: turns.bytes / 1024, unit: "KiB" },
      { name: `GET /api/souls/:id p50 (its transition counts read all ${TURNS} kept turns)`, value: percentile(detail.ms, 50), unit: "ms" },
      { name: `GET /api/souls p50 (${SOULS} souls)`, value: percentile(fleet.ms, 50), unit: "ms" },
      { name: "GET /api/souls response size", value: fleet.bytes / 1024, unit: "KiB" },
    ];
    if (chromiumMissing) return [...rows, { name: `page load in Chromium skipped: ${INSTALL_CHROMIUM}`, value: 0, unit: "(skipped)" }];
    browser = await launchChromium();
    const fleetPage = await loadTimes(browser, debug.url, "fleet");
    const soulPage = await loadTimes(browser, `${debug.url}#/souls/${HEAVY}`, "soul");
    return [
      ...rows,
      { name: `fleet page, ${SOULS} souls: navigation → all rows painted, p50 of ${RUNS}`, value: percentile(fleetPage.painted, 50), unit: "ms" },
      { name: `fleet page: navigation → all rows in the DOM, p50 (max ${Math.round(Math.max(...fleetPage.dom))} ms)`, value: percentile(fleetPage.dom, 50), unit: "ms" },
      { name: `soul page, ${TURNS} turns: navigation → newest turn and chart painted, p50 of ${RUNS}`, value: percentile(soulPage.painted, 50), unit: "ms" },
      { name: `soul page: navigation → newest turn and chart in the DOM, p50 (max ${Math.round(Math.max(...soulPage.dom))} ms)`, value: percentile(soulPage.dom, 50), unit: "ms" },
    ];
  } finally {
    await browser?.close();
    await debug?.stop();
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
