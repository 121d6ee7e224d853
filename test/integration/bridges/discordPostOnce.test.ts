/**
 * Each part of each speech shows on Discord once, also when Discord applied a post and its
 * answer never came back (a 5xx or a reset connection after the post landed), when the post
 * was a daimon's through a webhook (which takes no nonce), when the repeat comes after
 * Discord's nonce window, and when a post held back by a rate limit is abandoned at a stop:
 * the bridge's ledger, which records each post's text before it is made, decides, and the
 * bridge looks for that post on Discord before it posts again.
 *
 * The bridge runs on its own (real discord.js against the fake Discord, a real LMDB, the
 * in-process bus); the test publishes the speech a soul or a daimon would.
 */
import fc from "fast-check";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { BridgeLedger, splitText, type BridgeHandle } from "../../../bridges/core/index.ts";
import { DISCORD_LIMIT, type DiscordRef } from "../../../bridges/discord/index.ts";
import { clusterSubjects, createInProcessBus, type Bus, type ClusterSubjects } from "../../../runtime/bus/index.ts";
import { openStore, type Store } from "../../../runtime/store/index.ts";
import { BRIDGE, GENERAL, publishSpeech, startBridgeAlone, startDiscord } from "../../support/bridges/discordNode.ts";
import { startFakeDiscord, type FailureOptions, type FakeDiscord } from "../../support/fakes/discord/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const BOT_POST = "POST /channels/300/messages";
const WEBHOOK_POST = "POST /webhooks/:id/:token";

interface Rig {
  fake: FakeDiscord;
  bus: Bus;
  subjects: ClusterSubjects;
  store: Store;
  ledger: BridgeLedger;
  bridge: BridgeHandle;
  reports: string[];
}

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.bridge.stop().catch(() => undefined);
  await rig?.bus.close();
  await rig?.store.close();
  await rig?.fake.close();
  rig = undefined;
});

/** The bridge with daimon webhooks on; `nonceWindowMs: 0` makes every repeat a repeat after Discord's nonce window. */
async function start(o: { nonceWindowMs?: number } = {}): Promise<Rig> {
  const fake = o.nonceWindowMs === undefined ? await startDiscord() : await startFakeDiscord({ heartbeatIntervalMs: 1000, nonceWindowMs: o.nonceWindowMs });
  const bus = createInProcessBus({ cluster: "once", onHandlerError: () => undefined });
  const store = openStore({ path: dirs.make(), noSync: true });
  const reports: string[] = [];
  const bridge = await startBridgeAlone({ fake, bus, store, options: { daimonWebhooks: true }, reports });
  rig = { fake, bus, subjects: clusterSubjects("once"), store, ledger: new BridgeLedger(store, `bridge-${BRIDGE}`), bridge, reports };
  return rig;
}

/** A person's mention, taken by the bridge: the perception the speech answers. */
async function mention(r: Rig, text: string): Promise<string> {
  const sent = r.fake.messageCreate({ content: `<@100> ${text}` });
  const perception = `discord:${sent.id}`;
  await r.fake.waitFor(() => r.ledger.taken(perception) && !r.ledger.taken(perception)?.unpublished);
  return perception;
}

/** Resolves once every part of the speech is recorded with its message: the bridge is done with it. */
function posted(r: Rig, speechId: string, parts = 1, timeoutMs = 8000): Promise<DiscordRef[]> {
  return r.fake.waitFor(() => {
    const refs = Array.from({ length: parts }, (_, part) => r.ledger.post(speechId, part)?.ref as DiscordRef | undefined);
    return refs.every((ref) => ref !== undefined) && (refs as DiscordRef[]);
  }, timeoutMs);
}

const shown = (r: Rig, text: string) => r.fake.messages(GENERAL).filter((m) => !m.deleted && m.content.includes(text));

describe("a Discord post whose answer was lost", () => {
  it("a daimon's webhook post Discord applied and answered with a 500 is found, not posted again", async () => {
    const r = await start();
    const perception = await mention(r, "muse?");
    r.fake.failNext(WEBHOOK_POST, { applied: true, status: 500 });
    await publishSpeech(r, { from: "daimon-muse", proposalId: "muse-1", text: "Look closer.", final: true, perception });
    const [ref] = await posted(r, "muse-1");
    expect(shown(r, "Look closer.")).toHaveLength(1);
    expect(ref).toMatchObject({ id: shown(r, "Look closer.")[0].id, webhook: true });
    expect(r.fake.calls(WEBHOOK_POST)[0]).toMatchObject({ status: 500, applied: true });
    expect(r.bridge.status().counters.recovered).toBe(1);
  });

  it("a daimon's webhook post whose connection was reset after Discord applied it is found, not posted again", async () => {
    const r = await start();
    const perception = await mention(r, "muse, again?");
    r.fake.failNext(WEBHOOK_POST, { applied: true, reset: true });
    await publishSpeech(r, { from: "daimon-muse", proposalId: "muse-2", text: "Closer still.", final: true, perception });
    await posted(r, "muse-2");
    expect(shown(r, "Closer still.")).toHaveLength(1);
    expect(r.fake.calls(WEBHOOK_POST)[0]).toMatchObject({ status: -1, applied: true });
  });

  it("a bot post applied and answered with a 502, repeated after Discord's nonce window, is found, not posted again", async () => {
    const r = await start({ nonceWindowMs: 0 });
    const perception = await mention(r, "the answer?");
    r.fake.failNext(BOT_POST, { applied: true, status: 502 });
    await publishSpeech(r, { proposalId: "echo:1:0", text: "echo: the answer", final: true, perception });
    const [ref] = await posted(r, "echo:1:0");
    expect(shown(r, "echo: the answer")).toHaveLength(1);
    expect(ref.id).toBe(shown(r, "echo: the answer")[0].id);
    expect(shown(r, "echo: the answer")[0].message_reference).toMatchObject({ message_id: perception.slice("discord:".length) });
  });

  it("a streamed draft whose post Discord applied and answered with a 500 is found and edited into the final, not posted again", async () => {
    const r = await start({ nonceWindowMs: 0 });
    const perception = await mention(r, "stream it");
    r.fake.failNext(BOT_POST, { applied: true, status: 500 });
    await publishSpeech(r, { proposalId: "echo:2:0", text: "Once upon", final: false, chunk: 0, perception });
    await r.fake.waitFor(() => r.fake.calls(BOT_POST).some((c) => c.status === 500));
    await publishSpeech(r, { proposalId: "echo:2:0", text: " a time", final: false, chunk: 1, perception });
    await publishSpeech(r, { proposalId: "echo:2:0", text: "Once upon a time, the end.", final: true, perception });
    const [ref] = await posted(r, "echo:2:0");
    await r.fake.waitFor(() => r.ledger.post("echo:2:0", 0)?.shown === "Once upon a time, the end.");
    expect(shown(r, "Once upon")).toHaveLength(1);
    expect(shown(r, "Once upon")[0]).toMatchObject({ id: ref.id, content: "Once upon a time, the end." });
    expect(r.fake.calls(BOT_POST)).toHaveLength(1);
  });

  it("a webhook post held back by a 429 and abandoned at a stop is never sent: the next start posts it once", async () => {
    const r = await start();
    const perception = await mention(r, "before the stop");
    r.fake.rateLimitNext(WEBHOOK_POST, 1, 1);
    await publishSpeech(r, { from: "daimon-muse", proposalId: "muse-held", text: "Held back.", final: true, perception });
    const limited = await r.fake.waitFor(() => r.fake.calls(WEBHOOK_POST).find((c) => c.status === 429));
    await r.bridge.stop();
    r.bridge = await startBridgeAlone({ fake: r.fake, bus: r.bus, store: r.store, options: { daimonWebhooks: true }, reports: r.reports });
    await posted(r, "muse-held");
    // Past the 429's second (with a wide margin): a held-back post of the stopped bridge would be in by now.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, limited.at + 2500 - Date.now())));
    expect(shown(r, "Held back.")).toHaveLength(1);
    // The held-back request never reached Discord: one 429, then the next start's post.
    expect(r.fake.calls(WEBHOOK_POST).map((c) => c.status)).toEqual([429, 200]);
  });
});

describe("Discord posts under drawn faults", () => {
  const failure = fc.constantFrom<FailureOptions>(
    { applied: true, status: 500 },
    { applied: false, status: 503 },
    { applied: true, reset: true },
    { applied: false, reset: true },
  );
  const schedule = fc.record({ bot: fc.array(failure, { maxLength: 2 }), webhook: fc.array(failure, { maxLength: 2 }), long: fc.boolean() });

  it("every part of every speech, the soul's and a daimon's, shows exactly once once the faults clear (beyond the nonce window)", async () => {
    const r = await start({ nonceWindowMs: 0 });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(schedule, async ({ bot, webhook, long }) => {
        run++;
        const perception = await mention(r, `run ${run}`);
        for (const f of bot) r.fake.failNext(BOT_POST, f);
        for (const f of webhook) r.fake.failNext(WEBHOOK_POST, f);
        const soulText = long ? `${"x".repeat(1500)} run ${run} first half.\n\n${"y".repeat(1500)} run ${run} second half.` : `run ${run}: the answer`;
        const speeches = [
          { from: "echo", proposalId: `echo:${run}:0`, text: soulText },
          { from: "daimon-muse", proposalId: `muse:${run}:0`, text: `run ${run}: the muse's word` },
        ];
        try {
          for (const s of speeches) await publishSpeech(r, { ...s, final: true, perception });
          for (const s of speeches) await posted(r, s.proposalId, splitText(s.text, DISCORD_LIMIT).length, 15_000);
          const pieces = long ? [`run ${run} first half.`, `run ${run} second half.`, `run ${run}: the muse's word`] : [`run ${run}: the answer`, `run ${run}: the muse's word`];
          for (const piece of pieces) expect(shown(r, piece), piece).toHaveLength(1);
        } finally {
          r.fake.clearFailures();
        }
      }),
      { numRuns: 10 },
    );
  }, 120_000);
});
