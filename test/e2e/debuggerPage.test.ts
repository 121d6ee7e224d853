/**
 * The debugger page in a real browser (headless Chromium through playwright-core) against the
 * fixture server (test/support/debuggerFixtureServer.ts): the fleet of 200 souls, filter and
 * sort, a soul's timeline, state chart and memory, live updates over the events stream, the
 * token, and a layout that long text cannot widen. Screenshots go to test/e2e/artifacts/.
 *
 * Needs /usr/bin/chromium (`apt-get install -y chromium`): skipped without it on a developer's
 * machine, failed without it in CI (CI set).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, skipWithoutChromium } from "../support/browser.ts";
import { countTransitions, LONG_ID, MAIN_SOUL, UNBROKEN } from "../support/debuggerFixtureData.ts";
import { startDebuggerFixture, type DebuggerFixture } from "../support/debuggerFixtureServer.ts";

const ARTIFACTS = join(import.meta.dirname, "artifacts");
const skip = skipWithoutChromium("debuggerPage.test.ts");

/** What the page has drawn, read in the page (a string, so no DOM types are needed here). */
const evaluate = <T>(page: Page, expression: string) => page.evaluate(expression) as Promise<T>;
const fitsViewport = (page: Page) => evaluate<boolean>(page, "document.documentElement.scrollWidth <= window.innerWidth");
const visibleIds = (page: Page) => evaluate<string[]>(page, `[...document.querySelectorAll("table.fleet tbody tr:not([hidden])")].map((tr) => tr.dataset.soul)`);
const turnsColumn = (page: Page) => evaluate<number[]>(page, `[...document.querySelectorAll("table.fleet tbody tr:not([hidden]) td:nth-child(7)")].map((td) => Number(td.textContent.replace(/,/g, "")))`);

interface Session {
  fixture: DebuggerFixture;
  /** Errors the pages raised (uncaught, or logged as errors). */
  errors: string[];
  open(path: string, viewport?: { width: number; height: number }): Promise<Page>;
}

/** One browser for the whole file, started by the first block that needs it. */
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
});

/** A fixture server for the tests of one describe block (stopped after them), and pages on it. */
function session(options: { token?: string } = {}): Session {
  const s: Session = {
    fixture: undefined as unknown as DebuggerFixture,
    errors: [],
    async open(path, viewport = { width: 1400, height: 900 }) {
      const page = await browser!.newPage({ viewport });
      page.on("pageerror", (err) => s.errors.push(err.message));
      page.on("console", (msg) => msg.type() === "error" && s.errors.push(msg.text()));
      await page.goto(`${s.fixture.url}${path}`);
      return page;
    },
  };
  beforeAll(async () => {
    browser ??= await launchChromium();
    mkdirSync(ARTIFACTS, { recursive: true });
    // No timer: the tests send the live events themselves (ui.fixture.tick, updateSoul).
    s.fixture = await startDebuggerFixture({ tickMs: 0, ...options });
  });
  afterAll(async () => {
    await s.fixture?.stop();
  });
  return s;
}

describe.skipIf(skip)("the debugger page: the fleet", () => {
  const ui = session();

  it("lists every soul by id, filters them and sorts them by turns", async () => {
    const page = await ui.open("");
    await page.waitForSelector("table.fleet tbody tr");
    expect(await page.locator("table.fleet tbody tr").count()).toBe(200);
    expect(await page.locator("table.fleet tbody a.soul-id").count()).toBe(200);
    expect(await page.locator(`tr[data-soul="${MAIN_SOUL}"] a.soul-id`).textContent()).toBe(MAIN_SOUL);
    await page.locator("input.filter").fill("node-c down");
    const down = ui.fixture.data.souls.filter((s) => s.node === "node-c" && s.status === "down").map((s) => s.id);
    expect(down.length).toBeGreaterThan(0);
    expect((await visibleIds(page)).sort()).toEqual(down.sort());
    expect(await page.locator(".fleet-summary").textContent()).toContain(`${down.length} of 200 souls`);
    await page.locator("input.filter").fill("");
    await page.locator('th[data-key="turns"] button').click();
    const descending = await turnsColumn(page);
    expect(descending).toHaveLength(200);
    expect(descending).toEqual([...descending].sort((a, b) => b - a));
    await page.locator('th[data-key="turns"] button').click();
    const ascending = await turnsColumn(page);
    expect(ascending).toEqual([...ascending].sort((a, b) => a - b));
    expect(await page.locator('th[data-key="turns"]').getAttribute("aria-sort")).toBe("ascending");
    expect(await fitsViewport(page)).toBe(true);
    await page.close();
  });

  it("updates a fleet cell on a `fleet` event, without drawing the table again", async () => {
    const page = await ui.open("");
    await page.waitForSelector(".link-live");
    const row = page.locator('tr[data-soul="ada-017"]');
    await row.evaluate((tr) => ((tr as unknown as { dataset: Record<string, string> }).dataset["marker"] = "same-row"));
    ui.fixture.updateSoul("ada-017", { turns: 12_345, process: "farewell" });
    await expect.poll(() => row.locator("td:nth-child(7)").textContent()).toBe("12,345");
    expect(await row.locator("td:nth-child(4)").textContent()).toBe("farewell");
    expect(await row.getAttribute("data-marker")).toBe("same-row");
    await page.screenshot({ path: join(ARTIFACTS, "fleet.png") });
    await page.close();
  });

  it("raised no error in the page", () => {
    expect(ui.errors).toEqual([]);
  });
});

describe.skipIf(skip)("the debugger page: a soul", () => {
  const ui = session();

  it("opens a soul by clicking its id, and shows its turns: steps, gate decisions, silences", async () => {
    const page = await ui.open("");
    await page.locator(`tr[data-soul="${MAIN_SOUL}"] a.soul-id`).click();
    await page.waitForSelector("article.turn");
    expect(new URL(page.url()).hash).toBe(`#/souls/${MAIN_SOUL}`);
    expect(await page.locator(".soul-head .soul-id").textContent()).toBe(MAIN_SOUL);
    const newest = page.locator("article.turn").first();
    expect(await newest.getAttribute("data-turn")).toBe("30");
    const step = newest.locator("li.step").last();
    expect(await step.locator(".step-name").textContent()).toBe("externalDialog");
    const facts = await step.locator(".step-head").textContent();
    expect(facts).toContain("anthropic:claude-sonnet");
    expect(facts).toMatch(/tokens\s*\d+ in \/ \d+ out/);
    expect(facts).toMatch(/latency\s*[\d.]+ m?s/);
    await step.locator("summary", { hasText: "prompt" }).click();
    // The list is built on the details' toggle event, a task queued after the click: wait for it.
    await step.locator("ol.prompt li.message").first().waitFor();
    expect(await step.locator("ol.prompt li.message").count()).toBe(2);
    expect(await step.locator(".labelled", { hasText: "raw output" }).textContent()).toContain("Reply 30");
    expect(await page.locator(".failed").textContent()).toContain("timed out after 30000 ms");
    expect(await page.locator(".revert-marker").textContent()).toContain("reverted after turn 12 to the state after turn 9, by ada");
    await page.locator("button.more").click();
    const silent = page.locator('article[data-turn-id="samantha:14"]');
    expect(await silent.locator(".silence").textContent()).toContain("no-speech");
    const intercepted = page.locator('article[data-turn-id="samantha:10"]');
    expect(await intercepted.locator(".silence").textContent()).toContain("intercepted");
    expect(await intercepted.locator(".proposal").textContent()).toContain("content withheld");
    expect(await page.locator('article[data-turn-id="samantha:18"] .whisper').textContent()).toContain("kothar");
    // The unbroken link of turn 8 wraps: the page is no wider than the window.
    expect(await page.locator('article[data-turn-id="samantha:8"] .perception').textContent()).toContain(UNBROKEN);
    expect(await fitsViewport(page)).toBe(true);
    await page.close();
  });

  it("draws the state chart: a box per process, the current one highlighted, the ISM inside, counts on the edges", async () => {
    const page = await ui.open(`#/souls/${MAIN_SOUL}`);
    await page.waitForSelector("svg.state-chart");
    const chart = page.locator("svg.state-chart");
    expect(await chart.locator("g.process").count()).toBe(5);
    const current = ui.fixture.data.souls.find((s) => s.id === MAIN_SOUL)!.process;
    expect(await chart.locator("g.process.current").getAttribute("data-process")).toBe(current);
    expect(await chart.locator('g.process[data-process="thinking"] g.ism-state').count()).toBe(4);
    const counts = countTransitions(ui.fixture.data.turns.get(MAIN_SOUL)!);
    for (const [edge, n] of Object.entries(counts)) {
      expect(await chart.locator(`g.edge-label[data-edge="${edge}"] text`).textContent()).toBe(String(n));
    }
    // Declared in the machine, never taken: dashed, no count.
    expect(await chart.locator('g.edge-group[data-edge="thinking->planning"] path.edge-declared').count()).toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, "soul.png") });
    await page.close();
  });

  it("raised no error in the page", () => {
    expect(ui.errors).toEqual([]);
  });
});

describe.skipIf(skip)("the debugger page: live updates and revert", () => {
  const ui = session();

  it("puts a new turn on top on `soul.turn`, and moves the highlight on `fleet`", async () => {
    const page = await ui.open(`#/souls/${MAIN_SOUL}`);
    await page.waitForSelector("article.turn");
    await page.waitForSelector(".link-live");
    const before = Number(await page.locator("article.turn").first().getAttribute("data-turn"));
    ui.fixture.tick();
    await expect.poll(() => page.locator("article.turn").first().getAttribute("data-turn")).toBe(String(before + 1));
    ui.fixture.updateSoul(MAIN_SOUL, { process: "planning" });
    await expect.poll(() => page.locator("g.process.current").getAttribute("data-process")).toBe("planning");
    await page.locator(".soul-grid").scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, "soul-timeline.png") });
    await page.close();
  });

  it("reverts a soul to an earlier turn after asking", async () => {
    const page = await ui.open(`#/souls/${MAIN_SOUL}`);
    await page.waitForSelector("article.turn");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.locator('article[data-turn-id="samantha:20"] button.revert').click();
    await expect.poll(() => page.locator(".notice-ok").textContent()).toContain("state after turn 20");
    expect(ui.fixture.data.reverts.get(MAIN_SOUL)!.at(-1)).toMatchObject({ toTurn: 20 });
    await page.close();
  });

  it("keeps a long id and a narrow window inside the page", async () => {
    const page = await ui.open(`#/souls/${encodeURIComponent(LONG_ID)}`, { width: 640, height: 900 });
    await page.waitForSelector("article.turn");
    expect(await page.locator(".soul-head .soul-id").textContent()).toBe(LONG_ID);
    expect(await fitsViewport(page)).toBe(true);
    await page.goto(`${ui.fixture.url}#/`);
    await page.waitForSelector("table.fleet tbody tr");
    expect(await fitsViewport(page)).toBe(true);
    await page.close();
  });

  it("raised no error in the page", () => {
    expect(ui.errors).toEqual([]);
  });
});

describe.skipIf(skip)("the debugger page with a token", () => {
  const ui = session({ token: "s3cret-token" });

  it("takes ?token= once, removes it from the address and sends it on every call", async () => {
    const page = await ui.open(`?token=s3cret-token#/souls/${MAIN_SOUL}`);
    await page.waitForSelector("article.turn");
    expect(page.url()).not.toContain("token");
    expect(new URL(page.url()).hash).toBe(`#/souls/${MAIN_SOUL}`);
    await page.waitForSelector(".link-live");
    const api = ui.fixture.requests.filter((r) => r.includes(" /api/"));
    expect(api.length).toBeGreaterThan(2);
    expect(api.every((r) => r.endsWith(" Bearer s3cret-token"))).toBe(true);
    expect(api.some((r) => r.startsWith("GET /api/events "))).toBe(true);
    // A reload still has it (session storage), without it in the address.
    await page.reload();
    await page.waitForSelector("article.turn");
    await page.close();
  });

  it("says what is missing when the token is not given", async () => {
    const page = await ui.open("");
    await expect.poll(() => page.locator(".banner").textContent()).toContain("?token=");
    expect(await page.locator(".link").textContent()).toContain("token");
    await page.close();
  });
});
