/**
 * Ctrl-C in the middle of a turn across processes on a real nats-server: `ensoul up --nats`
 * hosting the soul and `ensoul chat --nats` talking to it, both real binaries, with a model
 * that answers only when the test lets it (the real Anthropic SDK against a local server
 * holding each answer behind a barrier). Each command says it is finishing the turn, the
 * turn is answered and committed, and both exit 0.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runEnsoul, startEnsoul } from "../../support/cli/runEnsoul.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { spawnNode } from "../../support/cluster/cliProcess.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { startAnthropicServer, type ScriptedServer } from "../../support/wire/anthropicServer.ts";

const dirs = tempDirs("ensoul-shutdown-nats-");

describeWithNats("stopping `ensoul up --nats` and `ensoul chat --nats` in the middle of a turn", () => {
  let nats: NatsServerHandle;
  let model: ScriptedServer;
  let release: () => void = () => undefined;

  beforeAll(async () => {
    nats = await startNatsServer({ jetstream: true });
    model = await startAnthropicServer();
    const barrier = new Promise<void>((resolve) => (release = resolve));
    model.otherwise({ type: "reply", after: barrier, text: "Here is my slow answer." });
  });
  afterAll(async () => {
    release();
    await model?.close();
    await nats?.dispose();
    dirs.cleanup();
  });

  it("Ctrl-C to the chat and to the node while the model thinks: the turn is answered and committed, both exit 0", async () => {
    const cluster = uniqueCluster("stop");
    const dir = dirs.make();
    const config = join(dir, "cluster.yaml");
    writeFileSync(config, `cluster: ${cluster}\nsouls:\n  - id: sam\n    blueprint: samantha\nruntime:\n  heartbeatMs: 200\n`);
    const data = join(dir, "data");
    const env = { ANTHROPIC_API_KEY: "sk-ant-test-shutdown", ANTHROPIC_BASE_URL: model.url };
    const node = spawnNode([config, "--node", "main", "--nats", nats.url, "--data", data], env);
    await node.waitFor(/ensoul up: ready/);

    const chat = startEnsoul(["chat", "sam", "--nats", nats.url, "--cluster", cluster, "--as", "Tom"], { env, timeoutMs: 60_000 });
    await chat.waitFor(/^Samantha \(sam\) on node main/m);
    chat.type("Hello, I'm Tom.");
    await until(() => model.requests.length > 0, 30_000, "the turn's model request");

    chat.child.kill("SIGINT");
    await chat.waitFor(/SIGINT, finishing the turn…/);
    node.child.kill("SIGINT");
    await node.waitFor(/SIGINT, stopping node main: finishing the running turns…/);
    release();

    const chatResult = await chat.exited;
    expect(chatResult.stderr).not.toMatch(/Error|Unhandled/);
    expect(chatResult.code).toBe(0);
    expect(chatResult.stdout).toContain("Samantha: Here is my slow answer.");
    expect(await node.exited).toBe(0);
    expect(node.output()).toMatch(/ensoul up: node main stopped; 1 committed turns persisted/);

    const memory = await runEnsoul(["memory", "sam", "--data", data]);
    expect(memory.stdout.split("\n")[0]).toMatch(/^soul sam on node main · process \w+ · 1 turns · inbox 0 pending, 0 failed$/);
  }, 120_000);
});
