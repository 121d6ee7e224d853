/**
 * A node configured to serve a skill gate whose NATS user may not subscribe to the gate's
 * verify subject. nats-server refuses the subscription asynchronously (a `-ERR 'Permissions
 * Violation'` after the SUB), so a node that did not wait for the answer used to log
 * `ready` while every remote verify of that skill went unanswered and failed closed. Here,
 * against a real nats-server running the generated config, the node refuses to start and
 * says why; the same user starts the same node without the skill gate.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, remoteTool } from "../../../actors/tool/index.ts";
import { inboxPrefixFor } from "../../../runtime/bus/permissions/index.ts";
import { parseClusterConfig, startNode, type ClusterConfig } from "../../../runtime/node/index.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import type { NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { password, startPermissionedServer } from "./securityKit.ts";

const dirs = tempDirs("ensoul-skill-gate-node-");

describeWithNats("a node whose NATS user cannot serve its skill gate", () => {
  const cluster = uniqueCluster("gateperm");
  const pass = password();
  let server: NatsServerHandle;
  let dispose: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ server, dispose } = await startPermissionedServer(cluster, [
      { user: "node-b", cluster, role: "node", nodeId: "b", password: pass },
      { user: "node-g", cluster, role: "node", nodeId: "b", skills: ["secrets"], password: pass },
      { user: "node-t", cluster, role: "node", nodeId: "b", tools: ["clock"], password: pass },
    ]));
  });
  afterAll(async () => {
    await dispose?.();
    dirs.cleanup();
  });

  const config = (withSkillGate: boolean, withTool = false): ClusterConfig =>
    parseClusterConfig({
      cluster,
      nodes: ["b"],
      souls: [{ id: "bea", blueprint: "samantha", node: "b" }],
      ...(withSkillGate ? { skillGates: [{ skill: "secrets", node: "b", gate: { builtin: "bouncer", options: { vault: ["swordfish-7731"] } } }] } : {}),
      ...(withTool ? { tools: [{ tool: clock, node: "b" }] } : {}),
      runtime: { heartbeatMs: 200 },
    });
  const nats = (user = "node-b") => ({ servers: server.url, user, pass, inboxPrefix: inboxPrefixFor(user) });

  it("refuses to start, naming the skill, its subject and the server's refusal", async () => {
    const data = dirs.make();
    await expect(startNode({ config: config(true), nats: nats(), nodeId: "b", data, store: { noSync: true }, log: () => undefined })).rejects.toThrow(
      new RegExp(`^node b cannot serve skill gate 'secrets': the server refused the subscription to ensoul\\.${cluster}\\.gate\\.secrets\\.verify \\(.*Permissions Violation.*\\)`, "i"),
    );
    // It let go of what it had opened: the same node starts from the same data directory.
    const node = await startNode({ config: config(false), nats: nats(), nodeId: "b", data, store: { noSync: true }, log: () => undefined });
    expect(node.status().state).toBe("running");
    await node.stop();
  }, 30_000);

  it("starts and serves the skill when its node user was granted it (role=node with skills=)", async () => {
    const data = dirs.make();
    const node = await startNode({ config: config(true), nats: nats("node-g"), nodeId: "b", data, store: { noSync: true }, log: () => undefined });
    try {
      expect(node.status().state).toBe("running");
      expect(node.status().skillGates).toEqual(["secrets"]);
    } finally {
      await node.stop();
    }
  }, 30_000);

  it("refuses to start when it cannot serve a tool placed on it, naming the tool and what to grant", async () => {
    const data = dirs.make();
    await expect(startNode({ config: config(false, true), nats: nats(), nodeId: "b", data, store: { noSync: true }, log: () => undefined })).rejects.toThrow(
      new RegExp(`^node b cannot serve tool 'clock': the server refused the subscription to ensoul\\.${cluster}\\.tool\\.clock\\.call \\(.*Permissions Violation.*\\).*tools=clock`, "i"),
    );
  }, 30_000);

  it("serves the tool when its node user was granted it (role=node with tools=): a call is answered by its tool actor", async () => {
    const data = dirs.make();
    const node = await startNode({ config: config(false, true), nats: nats("node-t"), nodeId: "b", data, store: { noSync: true }, log: () => undefined });
    try {
      const call = remoteTool({ bus: node.bus, cluster, name: "clock" });
      await expect(call.run({}, { callId: "t1:tool:0", soulId: "bea", signal: new AbortController().signal })).resolves.toEqual({ now: "2026-01-01T00:00:00.000Z" });
    } finally {
      await node.stop();
    }
  }, 30_000);
});

const clock = defineTool({ name: "clock", description: "the time", input: z.object({}), idempotent: true, run: async () => ({ now: "2026-01-01T00:00:00.000Z" }) });
