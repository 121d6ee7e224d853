/**
 * The tool-call ledger keeps a record only while the turn that made it may run again: each
 * commit prunes the records of that turn and earlier ones (a stray one a crash left between a
 * commit and its prune too, and one an older ensoul left under an old-form id), the turn in
 * flight keeps its own, and a failed turn's go with it.
 */
import { expect, it } from "vitest";
import { z } from "zod";
import { createSoul, defineSoul, useActions, useTool, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { createToolRegistry, defineTool, ledgerOf, TOOL_CALLS_NAMESPACE } from "../../../actors/tool/index.ts";
import { turnNumberOf, turnOfCall, type ToolCallRecord } from "../../../actors/tool/ToolCallLedger.ts";
import type { ActorStore } from "../../../runtime/store/index.ts";
import { record, said } from "../../support/soul/helpers.ts";
import { useTestEnv } from "../../support/soul/env.ts";

const env = useTestEnv();

const ran: string[] = [];
let during: string[] = [];
let store: ActorStore;
const entries = () => store.kvRange?.(TOOL_CALLS_NAMESPACE, []) ?? [];
const callIds = () => entries().map((e) => e.key[0] as string);
/** The ledger's records as `<turn> <state>`, in the order the calls were made. */
const records = () =>
  entries()
    .map((e) => e.value as ToolCallRecord)
    .sort((a, b) => (a.state === b.state ? 0 : a.state === "done" ? -1 : 1))
    .map((r) => `${r.turn} ${r.state}`);

/** Not idempotent: each call is recorded in the ledger, started then done. */
const stamp = defineTool({
  name: "stamp",
  description: "stamps a text",
  input: z.object({ text: z.string() }),
  run: ({ text }, ctx) => {
    ran.push(ctx.callId);
    during = records();
    return `${text}@${ctx.callId}`;
  },
});

const main: MentalProcess = async ({ workingMemory }) => {
  const text = usePerceptions().invokingPerception?.content ?? "";
  const first = await useTool<{ text: string }, string>("stamp")({ text });
  const second = await useTool<{ text: string }, string>("stamp")({ text });
  if (text === "fail") throw new Error("the process failed after its calls");
  useActions().speak(`${first} ${second}`);
  return workingMemory;
};
const stamper = defineSoul({ name: "Stamper", persona: "stamps", initialProcess: main, processes: { main } });

function start(id: string) {
  ran.length = 0;
  during = [];
  store = env.actor(id);
  const soul = createSoul({ blueprint: stamper, id, store, services: { tools: createToolRegistry([stamp]) } });
  return { soul, log: record(soul) };
}

it("reads the turn from a turn id and from an old-form call id, and nothing from an id it does not know", () => {
  expect(turnNumberOf("s1:7")).toBe(7);
  expect(turnNumberOf("s1:12:sub")).toBe(12);
  expect(turnOfCall("s1:7:tool:0")).toBe(7);
  expect(turnOfCall("s1:12:sub:tool:3")).toBe(12);
  expect(turnOfCall("whatever")).toBeUndefined();
  expect(turnOfCall("s1:tool:AbCdEfGhIjKlMnOpQrStUv")).toBeUndefined();
  expect(turnOfCall("s1:x:tool:0")).toBeUndefined();
});

it("after many turns with a non-idempotent tool, holds only the records of the turn in flight", async () => {
  const { soul, log } = start("many");
  for (let i = 1; i <= 20; i++) {
    await soul.perceive(said(`t${i}`));
    await soul.idle();
    // While the second call ran, the ledger held this turn's records (the first done, the second started), nothing older.
    expect(during).toEqual([`${i} done`, `${i} started`]);
  }
  await soul.idle();
  expect(ran).toHaveLength(40);
  expect(new Set(ran).size).toBe(40);
  expect(log.said().at(-1)).toBe(`t20@${ran[38]} t20@${ran[39]}`);
  // The prune follows the commit without holding up the turn: give it its moment.
  await expect.poll(callIds).toEqual([]);
  await soul.stop();
});

it("prunes at the next commit what a crash left between a commit and its prune, and keeps a later turn's and unknown ids", async () => {
  const ledger = ledgerOf(env.actor("stray"));
  const old = { tool: "stamp", input: "-", ts: 0 } as const;
  // Old-form ids (no turn in the record): their turn is read from the id.
  await ledger.put("stray:0:tool:0", { state: "done", ...old, ok: true, value: "old" });
  await ledger.put("stray:0:sub:tool:0", { state: "started", ...old });
  await ledger.put("stray:9:tool:0", { state: "started", ...old });
  // Ids that name the call: the record says its turn.
  await ledger.put("stray:tool:committed", { state: "started", ...old, turn: 0 });
  await ledger.put("stray:tool:later", { state: "started", ...old, turn: 9 });
  await ledger.put("elsewhere", { state: "started", ...old });
  const { soul } = start("stray");
  await soul.perceive(said("go"));
  await soul.idle();
  await expect.poll(callIds).toEqual(["elsewhere", "stray:9:tool:0", "stray:tool:later"]);
  expect(ran).toHaveLength(2);
  await soul.stop();
});

it("drops a failed turn's records; the next perception's turn (the same turn id) makes calls of its own", async () => {
  const { soul, log } = start("failing");
  await soul.perceive(said("fail"));
  await soul.idle();
  expect(log.errors()).toEqual([expect.stringContaining("the process failed after its calls")]);
  expect(ran).toHaveLength(2);
  await expect.poll(callIds).toEqual([]);

  await soul.perceive(said("next"));
  await soul.idle();
  expect(ran).toHaveLength(4);
  expect(new Set(ran).size).toBe(4);
  expect(log.said()).toEqual([`next@${ran[2]} next@${ran[3]}`]);
  await soul.stop();
});

it("memory ledgers prune the same way", async () => {
  const ledger = ledgerOf({});
  await ledger.put("m:1:tool:0", { state: "started", tool: "t", input: "-", ts: 0 });
  await ledger.put("m:tool:a", { state: "started", tool: "t", input: "-", turn: 1, ts: 0 });
  await ledger.put("m:tool:b", { state: "started", tool: "t", input: "-", turn: 2, ts: 0 });
  expect(await ledger.prune(1)).toBe(2);
  expect(ledger.get("m:1:tool:0")).toBeUndefined();
  expect(ledger.get("m:tool:a")).toBeUndefined();
  expect(ledger.get("m:tool:b")).toBeDefined();
});
