/**
 * The debugger page against a real node (in-process bus, 200 souls), in headless Chromium:
 * the fleet from the node's own status and heartbeats; a soul's timeline growing live (over
 * `GET /api/events`) as perceptions reach it, each turn with its cognitive step; a revert
 * from the page that brings the soul's memory back, with the turn numbers going on after it.
 * Screenshots go to test/e2e/artifacts/live-*.png.
 *
 * Needs /usr/bin/chromium (`apt-get install -y chromium`): skipped without it on a developer's
 * machine, failed without it in CI (CI set). See test/support/browser.ts.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineSoul, useActions, useSoulMemory, type MentalProcess } from "../../actors/soul/index.ts";
import { externalDialog } from "../../runtime/cognition/index.ts";
import { startDebugger, type DebuggerHandle } from "../../runtime/inspect/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../runtime/node/index.ts";
import { ModelRegistry } from "../../runtime/providers/index.ts";
import { launchChromium, skipWithoutChromium } from "../support/browser.ts";
import { echoSoul } from "../support/cluster/blueprints.ts";
import { perceive } from "../support/cluster/clusterKit.ts";
import { countingModel } from "../support/operations/countingModel.ts";
import { tempDirs } from "../support/tempDirs.ts";

const ARTIFACTS = join(import.meta.dirname, "artifacts");
const skip = skipWithoutChromium("debuggerLive.test.ts");
const SOULS = 200;
const WAIT = { timeout: 20_000 };

/** Counts what it heard and keeps the last message (soul memory, so a revert shows), then answers through one model step. */
const talk: MentalProcess = async ({ workingMemory }) => {
  const heard = useSoulMemory<number>("heard", 0);
  const last = useSoulMemory<string>("last", "");
  heard.current += 1;
  last.current = String(workingMemory.memories.at(-1)?.content ?? "");
  const [memory, reply] = await externalDialog(workingMemory, "Answer briefly.", { model: "fake:talk" });
  useActions().speak(reply);
  return memory;
};
const talker = defineSoul({ name: "Talker", persona: "Talks.", initialProcess: talk, processes: { talk } });
const others = Array.from({ length: SOULS - 1 }, (_, i) => ({ id: `echo-${String(i + 1).padStart(3, "0")}`, blueprint: echoSoul }));

/** What the page has drawn, read in the page (a string, so no DOM types are needed here). */
const evaluate = <T>(page: Page, expression: string) => page.evaluate(expression) as Promise<T>;
const fitsViewport = (page: Page) => evaluate<boolean>(page, "document.documentElement.scrollWidth <= window.innerWidth");
/** The soul memory panel as `key -> shown value`. */
const soulMemory = (page: Page) =>
  evaluate<Record<string, string>>(page, `(() => {
    const panel = [...document.querySelectorAll("aside.soul-side section.panel")].find((p) => p.querySelector("h3")?.textContent === "Soul memory");
    return Object.fromEntries([...(panel?.querySelectorAll("dl.kv-list dt") ?? [])].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent ?? ""]));
  })()`);
/** The whole page from its top (scrolled, the sticky header would land in the middle of a full-page shot). */
async function fullPageShot(page: Page, name: string): Promise<void> {
  await page.evaluate("window.scrollTo(0, 0)");
  await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
}
/**
 * Waits until an expression holds in the page. Polled with page.evaluate: the page's CSP has no
 * 'unsafe-eval', and page.waitForFunction evaluates a string predicate with eval at each poll.
 */
const holds = (page: Page, expression: string) => expect.poll(() => evaluate<boolean>(page, expression), WAIT).toBe(true);
const heardShows = (page: Page, n: number) => expect.poll(async () => (await soulMemory(page))["heard"], WAIT).toBe(String(n));

describe.skipIf(skip)("the debugger page on a real node", () => {
  const dirs = tempDirs();
  let node: EnsoulNode;
  let debug: DebuggerHandle;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    mkdirSync(ARTIFACTS, { recursive: true });
    const config = parseClusterConfig({
      cluster: "live",
      providers: { default: "fake:talk" },
      souls: [{ id: "talker", blueprint: talker }, ...others],
      runtime: { heartbeatMs: 250 },
    });
    node = await startNode({ config, data: dirs.make(), store: { noSync: true }, registry: new ModelRegistry().register("fake", countingModel()), log: () => undefined });
    debug = await startDebugger({ bus: node.bus, port: 0, nodes: [node.id] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on("pageerror", (err) => errors.push(err.message));
    page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));
  }, 60_000);
  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await debug?.stop();
    await node?.stop();
    dirs.cleanup();
  });

  it("shows the whole fleet, every soul by id on its node", async () => {
    await page.goto(debug.url);
    await holds(page, `document.querySelectorAll("table.fleet tbody tr").length === ${SOULS}`);
    expect(await page.locator("table.fleet tbody a.soul-id").count()).toBe(SOULS);
    const rows = await evaluate<[string, string, string][]>(page, `[...document.querySelectorAll("table.fleet tbody tr")].map((tr) => [tr.dataset.soul, tr.querySelector("a.soul-id").textContent, tr.cells[2].textContent])`);
    expect(rows.map(([id]) => id).sort()).toEqual(["talker", ...others.map((s) => s.id)].sort());
    expect(rows.every(([id, shown, onNode]) => shown === id && onNode === node.id)).toBe(true);
    expect(await page.locator("header.top .nodes").textContent()).toContain(node.id);
    expect(await page.locator(".fleet-summary").textContent()).toContain(`${SOULS} souls`);
    await page.waitForSelector(".link-live", WAIT);
    expect(await fitsViewport(page)).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, "live-fleet.png") });
  });

  it("opens a soul by its id and shows each new turn live, with its step", async () => {
    await page.locator('tr[data-soul="talker"] a.soul-id').click();
    await page.waitForSelector(".timeline .empty", WAIT);
    expect(new URL(page.url()).hash).toBe("#/souls/talker");
    expect(await page.locator(".soul-head .soul-id").textContent()).toBe("talker");
    await page.waitForSelector("svg.state-chart g.process.current[data-process='talk']", WAIT);

    await perceive(node.bus, "talker", "hello from the browser");
    const first = page.locator('article.turn[data-turn="1"]');
    await first.waitFor(WAIT);
    expect(await first.getAttribute("data-turn-id")).toBe("talker:1");
    expect(await first.locator(".perception").textContent()).toContain("hello from the browser");
    const step = first.locator("li.step");
    expect(await step.count()).toBe(1);
    expect(await step.locator(".step-name").textContent()).toBe("externalDialog");
    const facts = await step.locator(".step-head").textContent();
    expect(facts).toContain("fake:talk");
    expect(facts).toMatch(/tokens\s*10 in \/ 5 out/);
    expect(await step.locator(".labelled", { hasText: "raw output" }).textContent()).toContain("Fine, thank you.");
    await step.locator("summary", { hasText: "prompt" }).click();
    const prompt = await step.locator("ol.prompt").textContent();
    expect(prompt).toContain("hello from the browser");
    expect(prompt).toContain("Answer briefly.");
    expect(await first.locator(".proposal").textContent()).toContain("Fine, thank you.");
    await heardShows(page, 1);

    await perceive(node.bus, "talker", "second message");
    await page.locator('article.turn[data-turn="2"]').waitFor(WAIT);
    await perceive(node.bus, "talker", "third message");
    await page.locator('article.turn[data-turn="3"]').waitFor(WAIT);
    await heardShows(page, 3);
    expect(await evaluate<string[]>(page, `[...document.querySelectorAll("article.turn")].map((a) => a.dataset.turn)`)).toEqual(["3", "2", "1"]);
    expect(await soulMemory(page)).toMatchObject({ heard: "3", last: expect.stringContaining("third message") });
    // The newest turn is the state now: nothing to revert to there.
    expect(await page.locator('article.turn[data-turn="3"] button.revert').isDisabled()).toBe(true);
    expect(await fitsViewport(page)).toBe(true);
    await fullPageShot(page, "live-soul.png");
  });

  it("reverts the soul from the page: its memory goes back, and the next turn is turn 4", async () => {
    page.once("dialog", (dialog) => void dialog.accept());
    await page.locator('article.turn[data-turn="1"] button.revert').click();
    await page.waitForSelector(".notice-ok", WAIT);
    expect(await page.locator(".notice-ok").textContent()).toContain("state after turn 1");
    await heardShows(page, 1);
    expect(await soulMemory(page)).toMatchObject({ heard: "1", last: expect.stringContaining("hello from the browser") });
    await page.waitForSelector(".revert-marker", WAIT);
    expect(await page.locator(".revert-marker").first().textContent()).toContain("reverted after turn 3 to the state after turn 1");
    expect((await node.soul("talker")).memory().soulMemory).toMatchObject({ heard: 1 });
    // The state now is turn 1's: its button is the one with nothing to do; turn 3's undoes the revert.
    await holds(page, `document.querySelector('article.turn[data-turn="1"] button.revert')?.disabled === true`);
    expect(await page.locator('article.turn[data-turn="3"] button.revert').isDisabled()).toBe(false);
    expect(await fitsViewport(page)).toBe(true);
    await fullPageShot(page, "live-reverted.png");

    await perceive(node.bus, "talker", "after the revert");
    const fourth = page.locator('article.turn[data-turn="4"]');
    await fourth.waitFor(WAIT);
    expect(await fourth.locator(".perception").textContent()).toContain("after the revert");
    await heardShows(page, 2);
    expect(await page.locator("article.turn").first().getAttribute("data-turn")).toBe("4");
    await holds(page, `document.querySelector('article.turn[data-turn="4"] button.revert')?.disabled === true`);
    expect(await page.locator('article.turn[data-turn="1"] button.revert').isDisabled()).toBe(false);
    expect(await fitsViewport(page)).toBe(true);
  });

  it("raised no error in the page", () => {
    expect(errors).toEqual([]);
  });
});
