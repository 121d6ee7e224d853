/**
 * The live status of `ensoul up`: a block redrawn in place on a terminal, a line per change
 * otherwise.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { renderStatus, startStatusDisplay } from "../../../runtime/cli/statusDisplay.ts";
import { createNodeRegistry, type RegistrySoul } from "../../../runtime/node/index.ts";

const soul = (id: string, turns = 0): RegistrySoul => ({ id, name: "Samantha", process: "greeting", turns, pending: 0, status: "passivated", activations: 0, lastTurnAt: 0 });

function capture() {
  const out = new PassThrough();
  let text = "";
  out.on("data", (d: Buffer) => (text += d.toString()));
  return { out, text: () => text };
}

describe("the live status of ensoul up", () => {
  it("prints a line per change when the output is not a terminal", () => {
    const registry = createNodeRegistry({ node: "a", cluster: "demo", bus: "nats", souls: [soul("ann"), soul("bob")] });
    const { out, text } = capture();
    const display = startStatusDisplay({ registry, out, tty: false, where: "nats://x" });
    registry.trigger.stateChanged({ state: "running" });
    registry.trigger.soulsPatched({ patches: { ann: { status: "running", process: "conversation", turns: 1 } } });
    registry.trigger.soulsPatched({ patches: { ann: { status: "active" } } }); // running/idle flips are not news
    registry.trigger.daimonSet({ soul: "ann", name: "Kothar", mode: "whisper" });
    display.stop();
    expect(text().split("\n").filter(Boolean)).toEqual([
      "[a] node starting",
      "[a] ann: process greeting, 0 turns, passivated",
      "[a] bob: process greeting, 0 turns, passivated",
      "[a] node running",
      "[a] ann: process conversation, 1 turns, active",
      "[a] daimon Kothar of ann: whisper",
    ]);
  });

  it("redraws one block in place on a terminal", () => {
    const registry = createNodeRegistry({ node: "a", cluster: "demo", bus: "nats", souls: [soul("ann", 3)] });
    const lines = renderStatus(registry.getSnapshot().context, "nats://x", 20, registry.getSnapshot().context.startedAt + 65_000);
    expect(lines[0]).toBe("ensoul · cluster demo · node a · nats://x · starting · up 1m05s · 3 turns · 0 perceptions · 0 dead");
    expect(lines[1]).toMatch(/^ {2}soul +process +turns +pending +status$/);
    expect(lines[2]).toMatch(/^ {2}ann +greeting +3 +0 +passivated$/);
    const { out, text } = capture();
    const display = startStatusDisplay({ registry, out, tty: true, where: "nats://x" });
    display.note("ensoul up: SIGINT");
    display.stop();
    // Each redraw moves the cursor back over the block it drew and clears it.
    expect(text()).toContain(`\x1b[${lines.length}A\x1b[0J`);
    expect(text()).toContain("ensoul up: SIGINT\n");
  });

  it("shows the first souls of a big node and counts the rest", () => {
    const registry = createNodeRegistry({ node: "a", cluster: "demo", bus: "nats", souls: Array.from({ length: 30 }, (_, i) => soul(`s${i}`)) });
    const lines = renderStatus(registry.getSnapshot().context, "nats://x", 5);
    expect(lines).toHaveLength(2 + 5 + 1);
    expect(lines.at(-1)).toBe("  … and 25 more souls");
  });

  it("shows only the souls the node runs now (automatic placement), in both modes", () => {
    const registry = createNodeRegistry({ node: "a", cluster: "demo", bus: "nats", souls: [soul("ann"), soul("bob")] });
    const runs = (id: string) => id === "bob";
    const lines = renderStatus(registry.getSnapshot().context, "nats://x", 20, Date.now(), runs);
    expect(lines.slice(2).map((l) => l.trim().split(/\s+/)[0])).toEqual(["bob"]);
    const { out, text } = capture();
    startStatusDisplay({ registry, out, tty: false, where: "nats://x", shows: runs }).stop();
    expect(text()).toContain("[a] bob:");
    expect(text()).not.toContain("[a] ann:");
  });
});
