/**
 * A soul moved between two data directories with a soul file, with real nodes on the
 * offline model: Samantha talks on a node in one directory, is exported after it stops,
 * imported into a fresh directory, and a node started there continues the conversation
 * (the turn count goes on, the memories of the first place are there, the greeting does not
 * run again, and a perception left pending in the file is processed).
 */
import { afterAll, describe, expect, it } from "vitest";
import { clusterSubjects, type Bus } from "../../../runtime/bus/index.ts";
import { nodeDataDir, parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { exportSoul, importSoul, openStore, parseSoulFile, serializeSoulFile, type SoulFile } from "../../../runtime/store/index.ts";
import { until, watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-soulfile-");
afterAll(() => dirs.cleanup());

const config = () =>
  parseClusterConfig({
    cluster: "port",
    souls: [{ id: "sam", blueprint: "samantha" }],
    runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
  });

async function withNode<T>(data: string, fn: (node: EnsoulNode) => Promise<T>): Promise<T> {
  const node = await startNode({ config: config(), data, store: { noSync: true }, log: () => undefined });
  try {
    return await fn(node);
  } finally {
    await node.stop();
  }
}

/** Says `text` to sam and waits for the answer. */
async function say(bus: Bus, text: string): Promise<string> {
  const says = watchEnvelopes(bus, clusterSubjects("port").says("sam"), "speech");
  try {
    const env = await perceive(bus, "sam", text);
    const final = await says.next((e) => e.body.final && e.causation === env.id, 15_000, `sam's answer to "${text}"`);
    return final.body.text;
  } finally {
    says.stop();
  }
}

async function exportFrom(data: string): Promise<SoulFile> {
  const store = openStore({ path: nodeDataDir(data, "local"), reader: true });
  try {
    return parseSoulFile(serializeSoulFile(exportSoul(store, "sam")), "sam.json");
  } finally {
    await store.close();
  }
}

const contents = (file: SoulFile) => file.state.workingMemory.memories.map((m) => String(m.content));

describe("a soul moved to another data directory with a soul file", () => {
  it("continues the conversation on a node started there", async () => {
    const first = dirs.make();
    await withNode(first, async (node) => {
      await say(node.bus, "hello there");
      await say(node.bus, "my favourite tea is oolong");
    });
    const exported = await exportFrom(first);
    expect(exported.state.turn).toBe(2);
    expect(exported.state.invocationCounts.greeting).toBe(1);

    // A perception that arrived but was never processed travels in the file, as the old
    // place's inbox kept it: here a copy of the first one, under a new id.
    const store = openStore({ path: nodeDataDir(first, "local"), reader: true });
    const firstUser = exported.state.workingMemory.memories.find((m) => m.role === "user") as { metadata?: { perceptionId?: string } } | undefined;
    const firstId = String(firstUser?.metadata?.perceptionId);
    const received = store.actor("sam").inboxEntry(firstId)?.perception as Record<string, unknown> | undefined;
    await store.close();
    expect(received).toMatchObject({ id: firstId, content: "hello there" });
    expect(exported.inbox).toEqual([]);
    const file = parseSoulFile(serializeSoulFile(exported), "sam.json");
    const id = "01JLEFTPENDING0000000000001";
    file.inbox.push({ id, perception: { ...received, id, content: "I was left in the inbox" }, status: "pending", attempts: 0, receivedAt: Date.now() });

    const second = dirs.make();
    const target = openStore({ path: nodeDataDir(second, "local") });
    await importSoul(target, file);
    await target.close();

    await withNode(second, async (node) => {
      // The node brings the soul back for its pending perception before anything else.
      await until(() => (node.registry.getSnapshot().context.souls.get("sam")?.turns ?? 0) >= 3, 15_000, "the pending perception's turn");
      await say(node.bus, "do you still know me?");
    });
    const after = await exportFrom(second);
    expect(after.state.turn).toBe(4);
    // Still the conversation process: the greeting ran once, in the first place.
    expect(after.state.invocationCounts.greeting).toBe(1);
    expect(after.state.currentProcess).toBe(exported.state.currentProcess);
    const said = contents(after).join("\n");
    for (const line of ["hello there", "my favourite tea is oolong", "I was left in the inbox", "do you still know me?"]) expect(said).toContain(line);
    // The first place's memories come first, unchanged, in order.
    expect(after.state.workingMemory.memories.slice(0, exported.state.workingMemory.memories.length)).toEqual(exported.state.workingMemory.memories);
    expect(after.inbox).toEqual([]);
  });
});
