/**
 * The shared-context grants (rolePermissions `sharedContext`, docs/PROTOCOL.md "Shared context")
 * against a real nats-server running the generated config: a writer creates the bucket, writes
 * with compare-and-set and watches; a reader reads and watches but cannot write; a user without
 * the grant cannot touch the bucket. Every operation goes through the bus's own code
 * (natsSharedKv.ts) on connections with per-user inboxes, so the `$JS.API` subjects are the real ones.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstream } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNatsSharedKv } from "../../../runtime/bus/natsSharedKv.ts";
import { natsServerConfig, rolePermissions, sharedContextGrants, type NatsUserSpec } from "../../../runtime/bus/permissions/index.ts";
import { openSharedContext, type SharedChange } from "../../../runtime/bus/index.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { freePort, startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { connectAs, isPermissionViolation, password, sleep, type UserConnection } from "./securityKit.ts";

const C = "alpha";

describe("shared-context grants", () => {
  it("a node writes the bucket by default (its souls' useSharedContext); other roles only when asked; a reader gets no write", () => {
    expect(rolePermissions(C, "node").publish.allow).toEqual(rolePermissions(C, "node", { sharedContext: "write" }).publish.allow);
    expect(rolePermissions(C, "node").publish.allow).toEqual(expect.arrayContaining(sharedContextGrants(C, "write")));
    expect(rolePermissions(C, "node", { sharedContext: "read" }).publish.allow).not.toContain("$KV.ensoul_alpha_shared.>");
    for (const role of ["chat", "bridge", "daimon", "gate"] as const) {
      expect(rolePermissions(C, role, { souls: ["sam"], skills: ["s"], user: "u" }).publish.allow.some((s) => s.includes("_shared")), role).toBe(false);
    }
    const write = rolePermissions(C, "chat", { souls: ["sam"], sharedContext: "write" }).publish.allow;
    expect(write).toEqual([...rolePermissions(C, "chat", { souls: ["sam"] }).publish.allow, ...sharedContextGrants(C, "write")]);
    expect(sharedContextGrants(C, "write")).toContain("$KV.ensoul_alpha_shared.>");
    expect(sharedContextGrants(C, "read").filter((s) => s.startsWith("$KV.") || s.includes("STREAM.CREATE"))).toEqual([]);
    expect(() => sharedContextGrants(C, "all" as "read")).toThrow(/read or write/);
  });
});

describeWithNats("shared-context grants on a real nats-server", () => {
  let server: NatsServerHandle;
  let storeDir: string;
  const users: (NatsUserSpec & { password: string })[] = [
    { user: "node-w", cluster: C, role: "node", nodeId: "n1", sharedContext: "write", password: password() },
    { user: "chat-r", cluster: C, role: "chat", souls: ["sam"], sharedContext: "read", password: password() },
    { user: "chat-x", cluster: C, role: "chat", souls: ["sam"], password: password() },
  ];
  const conns = new Map<string, UserConnection>();
  const as = (user: string) => conns.get(user) as UserConnection;
  const kvOf = (user: string) => createNatsSharedKv(jetstream(as(user).nc), C);

  beforeAll(async () => {
    storeDir = mkdtempSync(join(tmpdir(), "ensoul-shared-perms-"));
    const port = await freePort();
    server = await startNatsServer({ jetstream: false, port, config: natsServerConfig({ cluster: C, users, jetstream: { storeDir }, port }) });
    for (const u of users) conns.set(u.user, await connectAs(server.url, u.user, u.password));
  });
  afterAll(async () => {
    await Promise.all([...conns.values()].map((c) => c.nc.close()));
    await server?.dispose();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  it("a writer creates the bucket, writes with compare-and-set and watches; a reader reads and watches; neither is refused anything", async () => {
    const writer = openSharedContext(kvOf("node-w"), "room");
    await writer.ready;
    const reader = openSharedContext(kvOf("chat-r"), "room");
    await reader.ready;
    const heard: SharedChange[] = [];
    reader.watch((c) => heard.push(c));

    await writer.set("topic", "tea");
    await writer.update<number>("n", (n) => (n ?? 0) + 1);
    await writer.delete("topic");
    expect(await reader.get("n")).toBe(1);
    for (let i = 0; i < 100 && heard.length < 3; i++) await sleep(20);
    expect(heard.map((c) => [c.key, c.value])).toEqual([
      ["topic", "tea"],
      ["n", 1],
      ["topic", undefined],
    ]);
    expect(reader.data).toEqual({ n: 1 });
    await sleep(100);
    expect(as("node-w").violations).toEqual([]);
    expect(as("chat-r").violations).toEqual([]);
  });

  it("a reader cannot write, and a user without the grant cannot even read", async () => {
    const refused = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (err) {
        return isPermissionViolation(err) || /permission/i.test(String((err as Error).message));
      }
      return false;
    };
    // The reader's write: the server refuses the publish to $KV (the bucket exists: the test above made it).
    await expect(refused(kvOf("chat-r").swap("room", "n", 99, 0))).resolves.toBe(true);
    await expect(refused(kvOf("chat-x").get("room", "n"))).resolves.toBe(true);
    expect(await kvOf("node-w").get("room", "n")).toMatchObject({ value: 1 });
  });
});
