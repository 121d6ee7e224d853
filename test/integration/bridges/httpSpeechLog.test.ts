/**
 * The HTTP bridge's speech log on a real LMDB: what it keeps stays bounded (the events and the
 * once-per-speech record of finals alike), and what it still keeps resumes as before.
 */
import { describe, expect, it } from "vitest";
import { SpeechLog, type SpeechEvent } from "../../../bridges/http/index.ts";
import type { Speech } from "../../../bridges/core/index.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();
const conversation = { platform: "http" as const, channel: "http", messageId: "m", direct: true };
const speech = (n: number): Speech => ({ id: `echo:${n}:0`, perception: `http:p${n}`, text: `answer ${n}`, final: true, speaker: { kind: "soul" } });

describe("the HTTP speech log", () => {
  it("prunes the record of finals with the events: a node up for months keeps a bounded log", async () => {
    const store = stores.open({ noSync: true });
    const log = new SpeechLog(store, "bridge-http-echo", { keep: 100 });
    for (let n = 1; n <= 1_200; n++) await log.final(speech(n), conversation);
    await log.close();
    const events = store.kv("bridge-http-echo", "speech").range();
    const finals = store.kv("bridge-http-echo", "speech-finals").range();
    // The last `keep` are always there; pruning runs every tenth of `keep`, so at most that many more.
    expect(events.length).toBeGreaterThanOrEqual(100);
    expect(events.length).toBeLessThanOrEqual(110);
    expect(finals.length).toBe(events.length);
    // What is kept is the newest, and a final still kept is still logged once.
    const idOf = (e: SpeechEvent | undefined) => (e && "id" in e ? e.id : undefined);
    expect(idOf(log.since(0)[0])).toBe(`echo:${1_200 - events.length + 1}:0`);
    await log.final(speech(1_200), conversation);
    await log.close();
    expect(log.since(0).filter((e) => idOf(e) === "echo:1200:0")).toHaveLength(1);
  });

  it("reports a write it could not make instead of leaving it unhandled", async () => {
    const store = stores.open({ noSync: true });
    const reported: string[] = [];
    const log = new SpeechLog(store, "bridge-http-echo", { keep: 100, report: (err, what) => reported.push(`${what}: ${(err as Error).message}`) });
    await store.close();
    log.chunk({ ...speech(1), final: false }, conversation);
    await log.close();
    expect(reported).toEqual([expect.stringMatching(/^logging a chunk of echo:1:0: /)]);
  });
});
