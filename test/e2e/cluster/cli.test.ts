/**
 * The cluster commands of the real `ensoul` binary, in child processes: their help, their
 * one-line errors, and each of them against a node running on a real nats-server (the node
 * in this process, so these stay quick).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { parseClusterConfig, startNode, type EnsoulNode, type SoulMemoryReply } from "../../../runtime/node/index.ts";
import { builtinSouls } from "../../../souls/index.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { runEnsoul, spawnNode } from "../../support/cluster/cliProcess.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { freePort } from "../../support/ports.ts";

const dirs = tempDirs("ensoul-cli-");
afterAll(() => dirs.cleanup());

describe("ensoul's cluster commands: help and one-line errors", () => {
  it.each(["up", "chat", "whisper", "status", "memory", "daimon", "stop"])("`ensoul %s --help` explains the command", async (command) => {
    const result = await runEnsoul([command, "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: ensoul ${command} `));
    if (command !== "memory" && command !== "up") expect(result.stdout).toContain("--nats <url>");
  });

  it("reports a bad config with its file and field, in one line", async () => {
    const dir = dirs.make();
    writeFileSync(join(dir, "cluster.yaml"), "souls:\n  - { id: a, blueprint: samantha }\n  - { id: b, blueprint: x }\n");
    const result = await runEnsoul(["up", join(dir, "cluster.yaml"), "--data", join(dir, "data")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`ensoul: ${join(dir, "cluster.yaml")}: souls[1].blueprint: unknown soul 'x' (builtin: ${Object.keys(builtinSouls).join(", ")}; your own soul: a path such as ./souls/x)\n`);
  });

  it("reports a NATS server that is not there, in one line", async () => {
    const port = await freePort();
    for (const args of [["status"], ["whisper", "sam", "hi"], ["memory", "sam"], ["chat", "sam"]]) {
      const result = await runEnsoul([...args, "--nats", `nats://127.0.0.1:${port}`]);
      expect(result.stderr).toBe(`ensoul: cannot reach NATS at nats://127.0.0.1:${port} (connection refused)\n`);
      expect(result.code).toBe(1);
    }
    const up = await runEnsoul(["up", join(import.meta.dirname, "..", "..", "..", "examples", "two-nodes.yaml"), "--node", "a", "--nats", `nats://127.0.0.1:${port}`, "--data", dirs.make()]);
    expect(up.stderr).toBe(`ensoul: cannot reach NATS at nats://127.0.0.1:${port} (connection refused)\n`);
    // Five CLI processes one after the other: seconds each on a busy machine.
  }, 90_000);

  it("says which commands need a running cluster", async () => {
    const result = await runEnsoul(["status"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("ensoul: ensoul status talks to a running cluster: give --nats <url> (or set ENSOUL_NATS_URL)\n");
  });

  it("runs a one-process cluster with `ensoul up` and stops it cleanly on SIGTERM", async () => {
    const dir = dirs.make();
    writeFileSync(join(dir, "solo.yaml"), "cluster: solo\nsouls:\n  - { id: sam, blueprint: samantha }\n");
    const node = spawnNode([join(dir, "solo.yaml"), "--data", join(dir, "data")]);
    await node.waitFor(/ensoul up: ready/);
    expect(node.output()).toContain("ensoul up: node local of cluster solo on in-process bus; souls: sam");
    expect(await node.kill("SIGTERM")).toBe(0);
    expect(node.output()).toMatch(/SIGTERM, stopping node local[\s\S]*\[local\] node stopped\nensoul up: node local stopped; 0 committed turns persisted\n$/);
  });

  it("`ensoul up --inspect <ws-url>` streams the node's machines to the receiver there until the node has stopped", async () => {
    const receiver = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => receiver.once("listening", resolve));
    const received: { type: string; name?: string; sessionId: string; snapshot?: { value?: unknown } }[] = [];
    receiver.on("connection", (socket) => socket.on("message", (data) => received.push(JSON.parse(data.toString()) as (typeof received)[number])));
    const url = `ws://127.0.0.1:${(receiver.address() as { port: number }).port}`;
    try {
      const dir = dirs.make();
      writeFileSync(
        join(dir, "watched.yaml"),
        "cluster: watched\nsouls:\n  - { id: sam, blueprint: samantha }\ndaimons:\n  - { soul: sam, name: Kothar, persona: You are Kothar., mode: off }\n",
      );
      const node = spawnNode([join(dir, "watched.yaml"), "--data", join(dir, "data"), "--inspect", url]);
      await node.waitFor(/ensoul up: ready/);
      expect(node.output()).toContain(`ensoul up: machines streamed to the Stately inspector at ${url}\n`);
      const daimon = () => received.find((e) => e.type === "@xstate.actor" && e.name === "daimon-sam");
      await until(() => daimon() !== undefined, 10_000, "the daimon's actor at the inspector");
      expect(await node.kill("SIGINT")).toBe(0);
      expect(node.output()).toMatch(/ensoul up: node local stopped; 0 committed turns persisted\n$/);
      // The inspection outlived the node: the daimon's last snapshot went out before it closed.
      await until(() => received.some((e) => e.type === "@xstate.snapshot" && e.sessionId === daimon()?.sessionId && e.snapshot?.value === "stopped"), 5_000, "the daimon's last snapshot");
      await until(() => receiver.clients.size === 0, 5_000, "the inspection to close its socket");
    } finally {
      for (const socket of receiver.clients) socket.terminate();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it("`--inspect` on up and demo: in their help, and a value that is neither a port nor a ws URL is a one-line error", async () => {
    for (const command of ["up", "demo"]) {
      const help = await runEnsoul([command, "--help"]);
      expect(help.stdout).toMatch(/--inspect \[port\|ws-url\]\s+stream [^-]*Stately\s+inspector/);
    }
    const bad = await runEnsoul(["up", "--inspect", "examples/cluster.yaml"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe("ensoul: --inspect takes a port (1-65535) or a ws:// or wss:// URL, got 'examples/cluster.yaml' (give other arguments before a bare --inspect)\n");
    const demo = await runEnsoul(["demo", "--inspect", "http://localhost:8080"]);
    expect(demo.code).toBe(2);
    expect(demo.stderr).toContain("got 'http://localhost:8080'");
  });
});

describeWithNats("ensoul's cluster commands against a running node", () => {
  let server: NatsServerHandle;
  let node: EnsoulNode;
  const cluster = uniqueCluster("cli");
  let data: string;
  const cli = (args: string[], stdin?: string) => runEnsoul([...args, "--cluster", cluster], { env: { ENSOUL_NATS_URL: server.url }, ...(stdin !== undefined ? { stdin } : {}) });

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
    data = dirs.make();
    const config = parseClusterConfig({
      cluster,
      souls: [
        { id: "sam", blueprint: "samantha" },
        { id: "echo", blueprint: echoSoul },
      ],
      daimons: [{ soul: "sam", name: "Kothar", persona: "You are Kothar.", mode: "off" }],
      runtime: { heartbeatMs: 200, ackWaitMs: 2_000 },
    });
    node = await startNode({ config, nats: { servers: server.url }, nodeId: "main", data, store: { noSync: true }, log: () => undefined });
  });
  afterAll(async () => {
    try {
      await node?.stop();
    } finally {
      await server?.dispose();
    }
  });

  it("`ensoul chat <soul> --nats` answers each piped line, then exits", async () => {
    const result = await cli(["chat", "sam", "--as", "ada"], "hello there\ntell me about tea\n");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const answers = result.stdout.split("\n").filter((l) => l.startsWith("Samantha: "));
    expect(answers).toHaveLength(2);
    expect(answers[0]).toContain('Hello, ada! You said "hello there"');
    expect(answers[1]).toContain("tea");
    expect(result.stdout).toMatch(/^Samantha \(sam\) on node main of cluster /);
  });

  it("`ensoul chat` names an unknown soul and the souls there are", async () => {
    const result = await cli(["chat", "nobody"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`ensoul: unknown soul 'nobody' (souls of cluster '${cluster}': sam, echo)\n`);
  });

  it("`ensoul status` shows the node, its souls and daimons", async () => {
    const result = await cli(["status"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^node main {2}pid \d+ {2}running {2}up \S+ {2}2 souls {2}\d+ turns {2}0 dead$/m);
    expect(result.stdout).toMatch(/^ {2}sam +conversation +turns 2/m);
    expect(result.stdout).toContain("  daimon Kothar of sam: off");
  });

  it("`ensoul daimon` switches a daimon's mode at run time", async () => {
    const result = await cli(["daimon", "sam", "whisper"]);
    expect(result.stdout).toBe("daimon Kothar of sam: whisper\n");
    expect(node.status().daimons).toEqual([{ soul: "sam", name: "Kothar", mode: "whisper" }]);
    const bad = await cli(["daimon", "echo", "off"]);
    expect(bad.stderr).toBe("ensoul: soul 'echo' has no daimon on this node\n");
    await cli(["daimon", "sam", "off"]);
  });

  it("`ensoul whisper` and `ensoul memory` (live, over NATS)", async () => {
    const whispered = await cli(["whisper", "echo", "remember <i>the</i> tea", "--source", "Kothar"]);
    expect(whispered.stdout).toBe("whispered to echo (node main): remember the tea\n");
    const memory = await cli(["memory", "echo", "--json"]);
    const reply = JSON.parse(memory.stdout) as SoulMemoryReply;
    expect(reply).toMatchObject({ soulId: "echo", node: "main", live: true, soulMemory: { daimonicWhisper: { content: "remember the tea", source: "Kothar" } } });
    const text = await cli(["memory", "sam"]);
    expect(text.stdout).toMatch(/^soul sam on node main \(live\) · process conversation · 2 turns · inbox 0 pending, 0 failed$/m);
    expect(text.stdout).toContain('[user ada] ada said: "hello there"');
    const missing = await cli(["whisper", "ghost", "hi"]);
    expect(missing.stderr).toBe(`ensoul: unknown soul 'ghost' (souls of cluster '${cluster}': sam, echo)\n`);
  });

  it("`ensoul stop` drains the node; `ensoul memory --data` then reads its LMDB", async () => {
    const result = await cli(["stop", "main"]);
    expect(result.stdout).toBe("node main is stopping\n");
    await node.stopped;
    const memory = await runEnsoul(["memory", "sam", "--data", data, "--json"]);
    expect(memory.stderr).toBe("");
    const reply = JSON.parse(memory.stdout) as SoulMemoryReply;
    expect(reply).toMatchObject({ soulId: "sam", node: "main", live: false, process: "conversation", turns: 2 });
    const unknown = await runEnsoul(["memory", "ghost", "--data", data]);
    expect(unknown.stderr).toBe(`ensoul: unknown soul 'ghost' in ${data} (souls there: echo, sam)\n`);
    const after = await cli(["stop", "main"]);
    expect(after.stderr).toBe(`ensoul: node 'main' of cluster '${cluster}' is not running\n`);
  });
});
