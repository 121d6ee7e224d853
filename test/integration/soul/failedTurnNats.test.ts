/**
 * A failed turn of a soul on a cluster, seen from the clients that talk to it over a real
 * nats-server: `ensoul chat --nats` (natsChat) prints each reason in one line, the soul's own
 * file and line for an exception, and goes on; `ensoul memory --nats` (memoryCommand, the node's
 * `memory` request) lists the failed perceptions with their reasons and attempts.
 */
import { PassThrough, Readable } from "node:stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { memoryCommand } from "../../../runtime/cli/memoryCommand.ts";
import { natsChat } from "../../../runtime/cli/natsChat.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { failingSoul, THROWN, UNDECLARED } from "../../support/souls/failingSoul.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
const CLUSTER = `failed_${process.pid}`;

function output() {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (d: Buffer) => (text += d.toString()));
  return { stream, lines: () => text.split("\n") };
}

describeWithNats("a failed turn over NATS", () => {
  let server: NatsServerHandle;
  let node: EnsoulNode;
  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    const config = parseClusterConfig({ cluster: CLUSTER, souls: [{ id: "fa", blueprint: failingSoul }], runtime: { heartbeatMs: 100, passivateAfterMs: 0 } });
    node = await startNode({ config, nats: { servers: server.url }, nodeId: "n1", data: dirs.make(), store: { noSync: true }, log: () => undefined });
  });
  afterAll(async () => {
    await node?.stop();
    await server?.dispose();
    dirs.cleanup();
  });

  it("ensoul chat --nats prints each reason in one line, and ensoul memory --nats lists the failed perceptions with them", async () => {
    const chat = output();
    await natsChat({ soul: "fa", nats: { servers: server.url }, cluster: CLUSTER, user: "Ada", turnTimeoutMs: 20_000, input: Readable.from(["boom\n", "bye\n", "hello\n"]), output: chat.stream });
    expect(chat.lines().filter((l) => /^(you>|Fa:|!)/.test(l))).toEqual([
      "you> boom",
      `! Fa could not answer: ${THROWN}`,
      "you> bye",
      `! Fa could not answer: ${UNDECLARED}`,
      "you> hello",
      "Fa: echo: hello",
    ]);

    const memory = output();
    const reply = await memoryCommand({ soul: "fa", nats: { servers: server.url }, cluster: CLUSTER, data: dirs.make(), out: memory.stream });
    expect(reply.failedPerceptions?.map((f) => [f.error, f.attempts])).toEqual([
      [THROWN, 1],
      [UNDECLARED, 1],
    ]);
    const lines = memory.lines();
    expect(lines[0]).toMatch(/^soul fa on node n1 \(live\) .* inbox 0 pending, 2 failed$/);
    const at = lines.indexOf("failed perceptions (2):");
    expect(lines.slice(at + 1, at + 5)).toEqual([
      expect.stringMatching(/^ {2}\S+Z · \S+ · Ada said: "boom" · 1 attempt$/),
      `    ${THROWN}`,
      expect.stringMatching(/^ {2}\S+Z · \S+ · Ada said: "bye" · 1 attempt$/),
      `    ${UNDECLARED}`,
    ]);
  });

  it("keeps the memory reply within one NATS message: failed perceptions too large to list whole are listed with their reasons alone", async () => {
    const soul = await node.soul("fa");
    for (const n of [1, 2]) await soul.perceive({ action: "said", content: `boom ${n} ${"x".repeat(600_000)}`, name: "Ada" });
    await soul.idle();
    const reply = await memoryCommand({ soul: "fa", nats: { servers: server.url }, cluster: CLUSTER, data: dirs.make(), json: true, out: output().stream });
    expect(reply.truncated).toBe(true);
    expect(reply.inbox.failed).toBe(4);
    expect(reply.failedPerceptions?.map((f) => [f.perception, f.error])).toEqual([
      [null, THROWN],
      [null, UNDECLARED],
      [null, THROWN],
      [null, THROWN],
    ]);
  });
});
