/**
 * The soul file against real LMDB: a soul with every part a soul file carries (memories in
 * regions with metadata, nested soul memory holding values JSON cannot, process memory, a
 * snapshot with next params, user models with several versions, schedules, other kv
 * namespaces, pending and failed inbox entries, an unacknowledged outbox entry) is exported,
 * imported into another store and exported again: the two documents are the same bytes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  exportSoul,
  importSoul,
  parseSoulFile,
  serializeSoulFile,
  StoreError,
  userModels,
  userModelKey,
  type ActorState,
  type Store,
} from "../../../runtime/store/index.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();
const others: string[] = [];
afterEach(() => {
  for (const dir of others.splice(0)) rmSync(dir, { recursive: true, force: true });
});
/** A store in a directory of its own: the place a soul is imported into. */
function otherStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), "ensoul-soulfile-"));
  others.push(dir);
  return stores.open({ path: dir });
}

const NOW = new Date("2025-03-01T12:00:00.000Z");

function richState(): ActorState {
  return {
    workingMemory: {
      soulName: "Samantha",
      regionOrder: ["core", "default"],
      memories: [
        { id: "m1", role: "system", content: "# Samantha", region: "core", timestamp: 1 },
        { id: "m2", role: "user", content: 'ada said: "hello"', name: "ada", metadata: { perceptionId: "p-1" }, timestamp: 2 },
        { id: "m3", role: "assistant", content: 'Samantha said: "hi Ada"', metadata: { step: "externalDialog", verb: "said" }, timestamp: 3 },
      ],
    },
    soulMemory: {
      profile: {
        name: "Ada",
        since: new Date("2024-01-02T03:04:05.678Z"),
        tags: ["tea", undefined, 3],
        avatar: new Uint8Array([1, 2, 250]),
        big: 2n ** 62n,
        score: Number.NaN,
        limit: Number.POSITIVE_INFINITY,
        lookup: new Map<unknown, unknown>([["a", 1], [2, { b: [true, null] }]]),
        missing: undefined,
      },
      lookalike: { $ensoul: "a field that looks like a tag" },
      deep: { a: { b: { c: [{ d: "e" }] } } },
    },
    processMemory: { conversation: [1, { topic: "tea" }], greeting: [] },
    currentProcess: "conversation",
    previousProcess: "greeting",
    invocationCounts: { greeting: 1, conversation: 2 },
    turn: 3,
    snapshot: { status: "active", value: { conversation: "idle" }, historyValue: {}, context: { current: "conversation", nextParams: { topic: "tea" } }, children: {} },
    metadata: { display: "Ada's friend" },
  };
}

/** Writes a soul with every part a soul file carries. */
async function seed(store: Store, id = "sam"): Promise<void> {
  const actor = store.actor(id);
  await actor.receive("p0", { id: "p0", action: "said", content: "first" });
  await actor.commitTurn({
    state: richState(),
    inboxDone: "p0",
    outbox: [{ id: "t3-0", target: "speech", payload: { content: "hi Ada", at: new Date(5) }, createdAt: 10 }],
    kv: [
      { namespace: "gate-budget", key: ["window"], value: { tokens: 120, since: 7 } },
      { namespace: "userModels", key: ["notes"], value: "not a version" },
    ],
  });
  const models = userModels(store, id);
  for (const note of ["met Ada", "likes tea", "works at night"]) await models.forUser("ada").save(`# Ada\n${note}`, note);
  await models.forUser("Ada\nLovelace").save("# Ada Lovelace", "first meeting");
  await actor.receive("p1", { id: "p1", action: "said", content: "are you there?" });
  await actor.receive("p2", { id: "p2", action: "said", content: "this one failed" });
  await actor.markError("p2", "provider timed out");
  await actor.putSchedule({ id: "s-late", at: 2_000, process: "conversation", perception: { action: "tick", content: "" }, params: { n: 2 } });
  await actor.putSchedule({ id: "s-soon", at: 1_000, process: "conversation", perception: { action: "tick", content: "" } });
}

describe("a soul file", () => {
  it("carries every part of the soul", async () => {
    const store = stores.open();
    await seed(store);
    const file = exportSoul(store, "sam", { now: NOW });
    expect(file.format).toBe("ensoul-soul");
    expect(file.formatVersion).toBe(1);
    expect(file.exportedAt).toBe(NOW.toISOString());
    expect(file.soul).toEqual({ id: "sam", blueprint: { name: "Samantha" } });
    expect(file.state.turn).toBe(3);
    expect(file.state.nextParams).toEqual({ topic: "tea" });
    expect(file.state.previousProcess).toBe("greeting");
    expect(file.state.workingMemory.memories.map((m) => m.id)).toEqual(["m1", "m2", "m3"]);
    // msgpackr reads bytes back as a Buffer (a Uint8Array).
    const soulMemory = richState().soulMemory as { profile: Record<string, unknown> };
    expect(file.state.soulMemory).toEqual({ ...soulMemory, profile: { ...soulMemory.profile, avatar: Buffer.from([1, 2, 250]) } });
    expect(file.userModels.map((m) => [m.user, m.versions.map((v) => v.version)])).toEqual([
      ["Ada\nLovelace", [1]],
      ["ada", [1, 2, 3]],
    ]);
    expect(file.userModels[1]?.versions[2]?.changeNote).toBe("works at night");
    expect(file.kv).toEqual([
      { namespace: "gate-budget", key: ["window"], value: { tokens: 120, since: 7 } },
      { namespace: "userModels", key: ["notes"], value: "not a version" },
    ]);
    // Done entries stay behind: they only recognise redeliveries from the old place.
    expect(file.inbox.map((e) => [e.id, e.status, e.error])).toEqual([
      ["p1", "pending", undefined],
      ["p2", "error", "provider timed out"],
    ]);
    expect(file.outbox.map((e) => e.id)).toEqual(["t3-0"]);
    expect(file.schedules.map((s) => s.id)).toEqual(["s-soon", "s-late"]);
  });

  it("round-trips: export, import elsewhere, export again gives the same bytes", async () => {
    const from = stores.open();
    await seed(from);
    const text = serializeSoulFile(exportSoul(from, "sam", { now: NOW }));
    const to = otherStore();
    await importSoul(to, parseSoulFile(text, "sam.json"));
    const again = serializeSoulFile(exportSoul(to, "sam", { now: NOW }));
    expect(again).toBe(text);
    // And the store holds what the original held, value for value.
    expect(to.actor("sam").loadState()).toEqual(from.actor("sam").loadState());
    expect(to.actor("sam").pendingOutbox()).toEqual(from.actor("sam").pendingOutbox());
    expect(to.actor("sam").schedules()).toEqual(from.actor("sam").schedules());
    expect(userModels(to, "sam").forUser("ada").history()).toEqual(userModels(from, "sam").forUser("ada").history());
  });

  it("writes the values JSON cannot hold as tags, and reads them back", async () => {
    const store = stores.open();
    await seed(store);
    const json = JSON.parse(serializeSoulFile(exportSoul(store, "sam", { now: NOW }))) as { state: { soulMemory: { profile: Record<string, unknown> } } };
    const profile = json.state.soulMemory.profile;
    expect(profile.since).toEqual({ $ensoul: "date", value: "2024-01-02T03:04:05.678Z" });
    expect(profile.tags).toEqual(["tea", { $ensoul: "undefined" }, 3]);
    expect(profile.avatar).toEqual({ $ensoul: "bytes", base64: "AQL6" });
    expect(profile.big).toEqual({ $ensoul: "bigint", value: (2n ** 62n).toString() });
    expect(profile.score).toEqual({ $ensoul: "number", value: "NaN" });
    expect(profile.limit).toEqual({ $ensoul: "number", value: "Infinity" });
    expect(profile.lookup).toEqual({ $ensoul: "map", entries: [["a", 1], [2, { b: [true, null] }]] });
    expect(profile.missing).toEqual({ $ensoul: "undefined" });
    // A stored object with an `$ensoul` field of its own is wrapped, so it cannot pass for a tag.
    expect((json.state.soulMemory as Record<string, unknown>).lookalike).toEqual({ $ensoul: "object", value: { $ensoul: "a field that looks like a tag" } });
  });

  it("continues where it left off: new arrivals queue after the imported ones, user model versions go on", async () => {
    const from = stores.open();
    await seed(from);
    const to = otherStore();
    await importSoul(to, parseSoulFile(serializeSoulFile(exportSoul(from, "sam")), "sam.json"));
    const actor = to.actor("sam");
    await actor.receive("p3", { id: "p3", action: "said", content: "after the move" });
    expect(actor.pendingInbox().map((e) => e.id)).toEqual(["p1", "p3"]);
    expect(actor.failedInbox().map((e) => e.id)).toEqual(["p2"]);
    await actor.retryInbox("p2");
    expect(actor.pendingInbox().map((e) => e.id)).toEqual(["p1", "p2", "p3"]);
    const saved = await userModels(to, "sam").forUser("ada").save("# Ada\nmoved", "moved house");
    expect(saved.version).toBe(4);
    expect(to.kv("sam", "userModels").get(userModelKey("Ada\nLovelace", 1))).toMatchObject({ markdown: "# Ada Lovelace" });
  });

  it("refuses to overwrite a soul that is there, replaces it whole when asked, and imports under another id", async () => {
    const from = stores.open();
    await seed(from);
    const file = parseSoulFile(serializeSoulFile(exportSoul(from, "sam")), "sam.json");
    const to = otherStore();
    await to.actor("sam").putSchedule({ id: "old", at: 5, process: "p", perception: {} });
    await expect(importSoul(to, file)).rejects.toThrow(/actor sam already has data in this store \(1 schedule\); refusing/);
    expect(to.actor("sam").loadState()).toBeUndefined();

    const result = await importSoul(to, file, { replace: true });
    expect(result.replaced).toBe("1 schedule");
    expect(to.actor("sam").schedules().map((s) => s.id)).toEqual(["s-soon", "s-late"]);

    const copy = await importSoul(to, file, { as: "sam-copy" });
    expect(copy.soulId).toBe("sam-copy");
    expect(to.actor("sam-copy").loadState()?.turn).toBe(3);
    expect(exportSoul(to, "sam-copy").soul.id).toBe("sam-copy");
  });

  it("names the souls there when asked for one it does not have", async () => {
    const store = stores.open();
    await seed(store);
    expect(() => exportSoul(store, "nobody")).toThrow(/unknown soul 'nobody' in .* \(souls there: sam\)/);
  });
});

describe("reading a soul file", () => {
  const valid = async (): Promise<Record<string, unknown>> => {
    const store = otherStore();
    await seed(store);
    return JSON.parse(serializeSoulFile(exportSoul(store, "sam", { now: NOW }))) as Record<string, unknown>;
  };
  const read = (doc: unknown) => () => parseSoulFile(typeof doc === "string" ? doc : JSON.stringify(doc), "x.json");

  it("refuses what is not a soul file, saying what it is", () => {
    expect(read("{ not json")).toThrow(/^x\.json is not a soul file: not JSON/);
    expect(read([1, 2])).toThrow(/x\.json is not a soul file: it is JSON, but not an object/);
    expect(read({ cluster: "one", souls: [] })).toThrow(/x\.json is not a soul file: its "format" is missing, not "ensoul-soul"/);
  });

  it("refuses a newer format version, naming both versions", async () => {
    const doc = { ...(await valid()), formatVersion: 2 };
    expect(read(doc)).toThrow(/x\.json is soul file format version 2, from a newer ensoul; this one reads version 1/);
  });

  it("refuses an unknown field rather than drop it, naming where it is", async () => {
    const doc = await valid();
    (doc.state as Record<string, unknown>).mood = "sunny";
    expect(read(doc)).toThrow(/x\.json: state\.mood: unknown field/);
  });

  it("names a malformed field and a malformed tag", async () => {
    const doc = await valid();
    (doc.state as Record<string, unknown>).turn = -1;
    expect(read(doc)).toThrow(/x\.json: state\.turn: /);
    const tagged = await valid();
    (tagged.state as { soulMemory: Record<string, unknown> }).soulMemory.x = { $ensoul: "symbol", value: "s" };
    expect(read(tagged)).toThrow(/x\.json: state\.soulMemory\.x: unknown \$ensoul tag "symbol"/);
  });

  it("refuses next params that disagree with the snapshot the soul resumes from", async () => {
    const doc = await valid();
    (doc.state as Record<string, unknown>).nextParams = { topic: "coffee" };
    expect(read(doc)).toThrow(/state\.nextParams does not match state\.snapshot\.context\.nextParams/);
  });

  it("refuses user model versions out of order", async () => {
    const doc = await valid();
    const models = doc.userModels as { versions: unknown[] }[];
    models[1]!.versions.reverse();
    expect(read(doc)).toThrow(/userModels\[1\]\.versions\[1\]: versions must go up/);
  });

  it("refuses an inbox entry whose perception has another id (it would be replayed at every start)", async () => {
    const doc = await valid();
    (doc.inbox as { perception: { id: string } }[])[0]!.perception.id = "p9";
    expect(read(doc)).toThrow(/x\.json: inbox\[0\]\.perception\.id must be the entry's id "p1", got "p9"/);
  });

  it("refuses a file whose inbox entry the store would refuse, writing nothing", async () => {
    const doc = await valid();
    const inbox = doc.inbox as { id: string; perception: { id: string } }[];
    inbox[1]!.id = "p1";
    inbox[1]!.perception.id = "p1";
    const to = otherStore();
    await expect(importSoul(to, read(doc)())).rejects.toThrow(StoreError);
    expect(to.actorIds()).toEqual([]);
  });
});
