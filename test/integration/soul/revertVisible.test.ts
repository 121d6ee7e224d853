/**
 * A revert is what a person reads as soon as it is answered (issue 23, item 7): after
 * `POST /api/souls/:id/revert` answers 200, with no perception since, the debugger's soul view
 * (`GET /api/souls/:id`), `ensoul memory` (over NATS and from the data directory) and the turns
 * list all show the reverted state and the revert. A node on a real nats-server, its souls
 * speaking and whispered to as the demo's are, the debugger a client of its own.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineSoul, useActions, useSoulMemory, type MentalProcess } from "../../../actors/soul/index.ts";
import { externalDialog } from "../../../runtime/cognition/index.ts";
import { memoryCommand } from "../../../runtime/cli/memoryCommand.ts";
import { startDebugger, type DebuggerHandle } from "../../../runtime/inspect/index.ts";
import { nodeDataDir, parseClusterConfig, type EnsoulNode, type SoulMemoryReply } from "../../../runtime/node/index.ts";
import { ModelRegistry } from "../../../runtime/providers/index.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { perceive, uniqueCluster, whisper } from "../../support/cluster/clusterKit.ts";
import { natsNodes } from "../../support/cluster/natsNodes.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { countingModel } from "../../support/operations/countingModel.ts";

/** Counts what it heard (soul memory) and answers through one model step; a subprocess notes each turn. */
const talk: MentalProcess = async ({ workingMemory }) => {
  useSoulMemory<number>("heard", 0).current += 1;
  const [memory, reply] = await externalDialog(workingMemory, "Answer briefly.", { model: "fake:talk" });
  useActions().speak(reply);
  return memory;
};
const note: MentalProcess = async ({ workingMemory }) => {
  useSoulMemory<number>("noted", 0).current += 1;
  return workingMemory;
};
const talker = defineSoul({ name: "Talker", persona: "Talks.", initialProcess: talk, processes: { talk }, subprocesses: [note] });

const contents = (wm: unknown) => ((wm as { memories?: { content: unknown }[] }).memories ?? []).map((m) => String(m.content));
const quiet = () => new Writable({ write: (_chunk, _enc, done) => done() });

describeWithNats("a revert, as a person reads it right after the 200", () => {
  const nats = natsNodes();
  let node: EnsoulNode;
  let data: string;
  let debug: DebuggerHandle;
  const cluster = uniqueCluster("revert");

  beforeAll(async () => {
    const config = parseClusterConfig({ cluster, providers: { default: "fake:talk" }, souls: [{ id: "talker", blueprint: talker }], runtime: { heartbeatMs: 100 } });
    data = nats.dirs.make();
    // Synced as a production node is (the data directory is read by `ensoul memory` in another environment).
    node = await nats.startNode({ config, nodeId: "a", data, store: {}, registry: new ModelRegistry().register("fake", countingModel()) });
    debug = await startDebugger({ bus: await nats.client(cluster), port: 0, nodes: ["a"] });
  });
  afterAll(async () => {
    await debug?.stop();
  });

  const api = async <T>(path: string, init?: RequestInit): Promise<T> => {
    const res = await fetch(new URL(path, debug.url), init);
    expect(res.status, `${path}: ${res.status}`).toBe(200);
    return (await res.json()) as T;
  };
  const memoryOver = (how: "nats" | "disk") =>
    memoryCommand({ soul: "talker", cluster, data: nodeDataDir(data, "a"), json: true, out: quiet(), ...(how === "nats" ? { nats: { servers: nats.server.url } } : {}) });

  it("shows the reverted memory everywhere, and the revert in the turns list, with no perception since", async () => {
    const soul = await node.soul("talker");
    for (const [i, text] of ["hello", "how are you?", "tell me more"].entries()) {
      await perceive(node.bus, "talker", text);
      await until(() => soul.state().turn >= i + 1, 10_000, `turn ${i + 1}`);
      await whisper(node.bus, "talker", `a hunch after ${text}`);
    }
    await node.idle();
    const after1 = (await api<{ turns: { turn: number; memory: { after: { content: unknown }[] } }[] }>("/api/souls/talker/turns")).turns.find((t) => t.turn === 1);
    const turnOne = (after1?.memory.after ?? []).map((m) => String(m.content));
    expect(turnOne.join(" ")).toContain("hello");
    expect(turnOne.join(" ")).not.toContain("tell me more");

    const reverted = await api<{ revert: { turn: number; toTurn: number } }>("/api/souls/talker/revert", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ turn: 1, by: "ada" }) });
    expect(reverted.revert).toMatchObject({ turn: 3, toTurn: 1 });

    // Read at once, in every way a person reads a soul: nothing has been perceived since.
    const [detail, turns, overNats, fromDisk] = await Promise.all([
      api<{ workingMemory: unknown; soulMemory: Record<string, unknown> }>("/api/souls/talker"),
      api<{ turns: { turn: number }[]; reverts: { turn: number; toTurn: number; by: string }[] }>("/api/souls/talker/turns"),
      memoryOver("nats"),
      memoryOver("disk"),
    ]);
    expect(contents(detail.workingMemory)).toEqual(turnOne);
    expect(detail.soulMemory).toMatchObject({ heard: 1 });
    for (const reply of [overNats, fromDisk] as SoulMemoryReply[]) {
      expect(contents(reply.workingMemory)).toEqual(turnOne);
      expect(reply.soulMemory).toMatchObject({ heard: 1 });
    }
    expect(turns.reverts).toEqual([expect.objectContaining({ turn: 3, toTurn: 1, by: "ada" })]);
    expect(soul.state().turn).toBe(3);
  }, 60_000);
});
