/**
 * A Discord message that arrives while its node stops. The node closes its bridges' intake
 * first (a platform that retries is refused and sends the message again to a node that takes
 * it), but Discord never sends a message again: the bridge keeps it in its ledger, decided by
 * the policy and not published, and its next start publishes it, once. The bridge runs here
 * on its own (real discord.js against the fake Discord, a real LMDB, the in-process bus).
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { BridgeLedger } from "../../../bridges/core/index.ts";
import { clusterSubjects, createInProcessBus, decodeEnvelope, isKind, type Bus, type Envelope } from "../../../runtime/bus/index.ts";
import { openStore, type Store } from "../../../runtime/store/index.ts";
import { BRIDGE, startBridgeAlone, startDiscord } from "../../support/bridges/discordNode.ts";
import type { FakeDiscord } from "../../support/fakes/discord/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());
const subjects = clusterSubjects("stopping");

let fake: FakeDiscord | undefined;
let bus: Bus | undefined;
let store: Store | undefined;
afterEach(async () => {
  await bus?.close();
  await store?.close();
  await fake?.close();
  fake = bus = store = undefined;
});

function startBridge(f: FakeDiscord, b: Bus, s: Store, reports: string[]) {
  return startBridgeAlone({ fake: f, bus: b, store: s, reports });
}

describe("a Discord message arriving while the node stops", () => {
  it("is kept in the ledger, not published, and the next start publishes it once", async () => {
    const f = (fake = await startDiscord());
    const b = (bus = createInProcessBus({ cluster: "stopping" }));
    const s = (store = openStore({ path: dirs.make(), noSync: true }));
    const perceptions: Envelope<"perception">[] = [];
    b.subscribe(subjects.perceive("echo"), (msg) => {
      const decoded = decodeEnvelope(msg.data);
      if (decoded.ok && isKind(decoded.envelope, "perception")) perceptions.push(decoded.envelope);
    });
    const reports: string[] = [];
    const first = await startBridge(f, b, s, reports);
    // What a node's stop does first: no new platform messages.
    first.runtime.closeIntake();
    const late = f.messageCreate({ content: "<@100> just as the node stops" });
    const ignoredLate = f.messageCreate({ content: "no mention: the policy still decides" });
    const ledger = new BridgeLedger(s, `bridge-${BRIDGE}`);
    await f.waitFor(() => ledger.taken(`discord:${late.id}`)?.unpublished);
    await first.stop();
    expect(perceptions).toEqual([]);
    expect(ledger.taken(`discord:${ignoredLate.id}`)).toBeUndefined();

    const second = await startBridge(f, b, s, reports);
    try {
      await f.waitFor(() => perceptions.length > 0);
      expect(perceptions.map((p) => [p.id, p.body.content])).toEqual([[`discord:${late.id}`, "just as the node stops"]]);
      expect(ledger.taken(`discord:${late.id}`)).toMatchObject({ conversation: { channel: "300", messageId: late.id } });
      expect(ledger.unpublished()).toEqual([]);
      expect(reports).toEqual([]);
    } finally {
      await second.stop();
    }
  });
});
