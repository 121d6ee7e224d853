/**
 * `ensoul chat` to a soul whose node is down: the live nodes' heartbeats say which node the
 * cluster config places it on, so the chat says that node is down instead of `unknown soul`,
 * and with --queue it leaves the line in the cluster's stream and waits: the soul answers once
 * its node is back. Two real nodes on a real nats-server, the chat as a child process.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterSubjects, connectNatsBus, type Bus } from "../../../runtime/bus/index.ts";
import { parseClusterConfig, startNode, type ClusterConfig, type EnsoulNode } from "../../../runtime/node/index.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { runEnsoul } from "../../support/cluster/cliProcess.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-chat-queue-");
afterAll(() => dirs.cleanup());

describeWithNats("ensoul chat to a soul whose node is down", () => {
  const cluster = uniqueCluster("down");
  let server: NatsServerHandle;
  let config: ClusterConfig;
  let watcher: Bus;
  const nodes: EnsoulNode[] = [];
  const dataB = dirs.make();
  const start = async (nodeId: string, data: string) => {
    const node = await startNode({ config, nats: { servers: server.url }, nodeId, data, store: { noSync: true }, log: () => undefined });
    nodes.push(node);
    return node;
  };
  const chat = (args: string[], stdin = "") => runEnsoul(["chat", ...args, "--cluster", cluster, "--as", "ada"], { env: { ENSOUL_NATS_URL: server.url }, stdin, timeoutMs: 60_000 });

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    config = parseClusterConfig({
      cluster,
      nodes: ["a", "b"],
      souls: [
        { id: "echo", blueprint: echoSoul, node: "a" },
        { id: "sam", blueprint: "samantha", node: "b" },
      ],
      runtime: { heartbeatMs: 200, ackWaitMs: 2_000 },
    });
    watcher = await connectNatsBus({ servers: server.url, cluster });
    await start("a", dirs.make());
    // Node b ran once (its durable consumer exists), then went down.
    await (await start("b", dataB)).stop();
  });

  afterAll(async () => {
    try {
      for (const node of nodes) await node.stop();
      await watcher?.close();
    } finally {
      await server?.dispose();
    }
  });

  it("says which node is down, instead of `unknown soul`, and offers --queue", async () => {
    const result = await chat(["sam"], "hello\n");
    expect(result.stderr).toBe(
      `ensoul: soul 'sam' is on node 'b' of cluster '${cluster}', which is not running (no heartbeat within 2500 ms); ` +
        "give --queue to leave your lines for it: they are answered when it is back\n",
    );
    expect(result.code).toBe(1);
  });

  it("with --queue, a line sent while the node is down is answered once it is back", async () => {
    const perceptions = watchEnvelopes(watcher, clusterSubjects(cluster).perceive("sam"), "perception");
    const answered = chat(["sam", "--queue"], "are you there?\n");
    // The line is in the stream while node b is still down; then b comes back.
    await perceptions.next((p) => p.body.content === "are you there?", 30_000, "the queued perception");
    perceptions.stop();
    await start("b", dataB);
    const result = await answered;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^sam: node b of cluster \S+ is not running; your lines wait for it and are answered when it is back/);
    expect(result.stdout).toContain('sam: Hello, ada! You said "are you there?"');
  }, 90_000);
});
