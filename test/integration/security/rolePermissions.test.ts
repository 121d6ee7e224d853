import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidNameError } from "../../../runtime/bus/index.ts";
import { failoverGrants, inboxPrefixFor, rolePermissions, ROLES, sharedContextGrants, type Role, type RolePermissions } from "../../../runtime/bus/permissions/index.ts";

const JS_CONNECT = ["$JS.API.INFO", "$JS.API.STREAM.INFO.ENSOUL_demo"];

describe("rolePermissions: the exact lists per role", () => {
  it("bridge: publish perceive, subscribe says, its own durable consumer over says, its own inbox", () => {
    expect(rolePermissions("demo", "bridge", { user: "bridge1" })).toEqual({
      publish: {
        allow: [
          "ensoul.demo.soul.*.perceive",
          "ensoul.demo.dead",
          ...JS_CONNECT,
          "$JS.API.CONSUMER.INFO.ENSOUL_demo.bridge1",
          "$JS.API.CONSUMER.CREATE.ENSOUL_demo.bridge1.ensoul.demo.soul.*.says",
          "$JS.API.CONSUMER.MSG.NEXT.ENSOUL_demo.bridge1",
          "$JS.ACK.ENSOUL_demo.bridge1.>",
        ],
      },
      subscribe: { allow: ["ensoul.demo.soul.*.says", "_INBOX_bridge1.>"] },
    } satisfies RolePermissions);
  });

  it("bridge limited to souls, with named consumers: one create subject per soul's says", () => {
    const p = rolePermissions("demo", "bridge", { user: "b", souls: ["sam", "kai"], consumers: ["b-sam"] });
    expect(p.publish.allow).toEqual([
      "ensoul.demo.soul.sam.perceive",
      "ensoul.demo.soul.kai.perceive",
      "ensoul.demo.dead",
      ...JS_CONNECT,
      "$JS.API.CONSUMER.INFO.ENSOUL_demo.b-sam",
      "$JS.API.CONSUMER.CREATE.ENSOUL_demo.b-sam.ensoul.demo.soul.sam.says",
      "$JS.API.CONSUMER.CREATE.ENSOUL_demo.b-sam.ensoul.demo.soul.kai.says",
      "$JS.API.CONSUMER.MSG.NEXT.ENSOUL_demo.b-sam",
      "$JS.ACK.ENSOUL_demo.b-sam.>",
    ]);
    expect(p.subscribe.allow).toEqual(["ensoul.demo.soul.sam.says", "ensoul.demo.soul.kai.says", "_INBOX_b.>"]);
  });

  it("bridge without a user or consumers gets no consumer rights at all (never a wildcard consumer)", () => {
    const p = rolePermissions("demo", "bridge");
    expect(p.publish.allow.filter((s) => s.includes("CONSUMER") || s.startsWith("$JS.ACK"))).toEqual([]);
    expect(p.subscribe.allow).toContain("_INBOX.>");
  });

  it("daimon: whisper to, and overhear, the souls it watches; speak adds says and perceive", () => {
    expect(rolePermissions("demo", "daimon", { user: "kothar", souls: ["sam"] })).toEqual({
      publish: { allow: ["ensoul.demo.soul.sam.whisper", ...JS_CONNECT] },
      subscribe: { allow: ["ensoul.demo.soul.sam.perceive", "ensoul.demo.soul.sam.says", "_INBOX_kothar.>"] },
    });
    expect(rolePermissions("demo", "daimon", { user: "kothar", souls: ["sam"], speak: true }).publish.allow).toEqual([
      "ensoul.demo.soul.sam.whisper",
      "ensoul.demo.soul.sam.says",
      "ensoul.demo.soul.sam.perceive",
      ...JS_CONNECT,
    ]);
  });

  it("chat: publish perceive; hear says and events of its souls and every node's heartbeat; no consumers, no dead letters", () => {
    expect(rolePermissions("demo", "chat", { user: "ada", souls: ["sam"] })).toEqual({
      publish: { allow: ["ensoul.demo.soul.sam.perceive", ...JS_CONNECT] },
      subscribe: { allow: ["ensoul.demo.soul.sam.says", "ensoul.demo.soul.sam.events", "ensoul.demo.node.*.heartbeat", "_INBOX_ada.>"] },
    } satisfies RolePermissions);
  });

  it("gate: serve verify only in the skill's queue group, answer requests via allow_responses", () => {
    expect(rolePermissions("demo", "gate", { user: "g1", skills: ["tone", "no-secrets"] })).toEqual({
      publish: { allow: ["ensoul.demo.dead", ...JS_CONNECT] },
      subscribe: { allow: ["ensoul.demo.gate.tone.verify tone", "ensoul.demo.gate.no-secrets.verify no-secrets", "_INBOX_g1.>"] },
      allowResponses: { max: 1, expiresMs: 60_000 },
    });
    expect(rolePermissions("demo", "gate", { user: "g1" }).subscribe.allow[0]).toBe("ensoul.demo.gate.*.verify *");
  });

  it("node: the rest of its cluster and the cluster stream's API, nothing of other streams", () => {
    expect(rolePermissions("demo", "node", { user: "node-a", nodeId: "n1" })).toEqual({
      publish: {
        allow: [
          "ensoul.demo.soul.*.perceive",
          "ensoul.demo.soul.*.whisper",
          "ensoul.demo.soul.*.says",
          "ensoul.demo.soul.*.events",
          "ensoul.demo.soul.*.internal",
          "ensoul.demo.gate.*.verify",
          "ensoul.demo.tool.*.call",
          "ensoul.demo.node.*.*",
          "ensoul.demo.dead",
          ...JS_CONNECT,
          "$JS.API.STREAM.CREATE.ENSOUL_demo",
          "$JS.API.STREAM.UPDATE.ENSOUL_demo",
          "$JS.API.CONSUMER.CREATE.ENSOUL_demo.>",
          "$JS.API.CONSUMER.DURABLE.CREATE.ENSOUL_demo.*",
          "$JS.API.CONSUMER.INFO.ENSOUL_demo.*",
          "$JS.API.CONSUMER.DELETE.ENSOUL_demo.*",
          "$JS.API.CONSUMER.NAMES.ENSOUL_demo",
          "$JS.API.CONSUMER.MSG.NEXT.ENSOUL_demo.*",
          "$JS.ACK.ENSOUL_demo.>",
          // Failover: its souls' histories, the leases, a moved soul's perceptions read back.
          ...failoverGrants("demo"),
          // Its souls' shared contexts (useSharedContext): the cluster's bucket, written.
          ...sharedContextGrants("demo", "write"),
        ],
      },
      subscribe: {
        allow: [
          "ensoul.demo.soul.*.perceive",
          "ensoul.demo.soul.*.whisper",
          "ensoul.demo.soul.*.says",
          "ensoul.demo.soul.*.events",
          "ensoul.demo.node.n1.>",
          "ensoul.demo.dead",
          "_INBOX_node-a.>",
        ],
      },
      allowResponses: { max: 1, expiresMs: 60_000 },
    });
    expect(rolePermissions("demo", "node").subscribe.allow).toContain("ensoul.demo.node.*.>");
  });

  it("node with tools: serves each named tool in its queue group tool-<name>, and none without the grant", () => {
    const sub = rolePermissions("demo", "node", { tools: ["clock", "notes"] }).subscribe.allow;
    expect(sub).toContain("ensoul.demo.tool.clock.call tool-clock");
    expect(sub).toContain("ensoul.demo.tool.notes.call tool-notes");
    expect(rolePermissions("demo", "node").subscribe.allow.some((s) => s.includes(".tool."))).toBe(false);
    expect(() => rolePermissions("demo", "node", { tools: ["a b"] })).toThrow();
  });

  it("node with skills: serves each named skill in its queue group, and no skill without the grant", () => {
    const serving = rolePermissions("demo", "node", { user: "node-b", nodeId: "b", skills: ["secrets"] }).subscribe.allow;
    expect(serving.filter((s) => s.includes(".gate."))).toEqual(["ensoul.demo.gate.secrets.verify secrets"]);
    expect(rolePermissions("demo", "node").subscribe.allow.filter((s) => s.includes(".gate."))).toEqual([]);
  });

  it("only a node may publish the perceptions in a soul's own voice or routed to a process (the internal subject)", () => {
    for (const role of ROLES) {
      const p = rolePermissions("demo", role, { user: "u", souls: ["sam"], speak: true });
      const internal = [...p.publish.allow].filter((s) => /^ensoul\.demo\.soul\.[^.]+\.(internal|>)$|^ensoul\.demo\.(>|soul\.>)$|^>$/.test(s));
      expect(internal, role).toEqual(role === "node" ? ["ensoul.demo.soul.*.internal"] : []);
    }
  });

  it("no role may delete or purge a stream (a node compacts a soul's history with a rollup on that soul's subject), or touch the JetStream API of everything", () => {
    for (const role of ROLES) {
      const all = [...rolePermissions("demo", role, { user: "u" }).publish.allow];
      expect(all.filter((s) => /STREAM\.DELETE\.|DELETE\.ENSOUL_demo$|STREAM\.(NAMES|LIST)|^\$JS\.API\.>$|^>$/.test(s)), role).toEqual([]);
      expect(all.filter((s) => /PURGE|MSG\.DELETE/.test(s)), role).toEqual([]);
    }
  });

  it("inbox prefix: per user when a user is given, shared `_INBOX` otherwise, or as asked", () => {
    expect(inboxPrefixFor("bridge1")).toBe("_INBOX_bridge1");
    expect(rolePermissions("demo", "daimon").subscribe.allow).toContain("_INBOX.>");
    expect(rolePermissions("demo", "daimon", { user: "d", inboxPrefix: "_INBOX" }).subscribe.allow).toContain("_INBOX.>");
    expect(rolePermissions("demo", "daimon", { inboxPrefix: "replies_d" }).subscribe.allow).toContain("replies_d.>");
  });
});

describe("rolePermissions: names are tokens, so nothing can be injected", () => {
  const attacks = ["", "a.b", "*", ">", "a*", "a b", "a\nb", "demo.>", "x\u0000", "é", "a".repeat(129)];

  it.each(attacks)("rejects %j as cluster, soul, skill, node, consumer, user and inbox prefix", (bad) => {
    expect(() => rolePermissions(bad, "node")).toThrow(InvalidNameError);
    expect(() => rolePermissions("demo", "bridge", { souls: [bad] })).toThrow(InvalidNameError);
    expect(() => rolePermissions("demo", "gate", { skills: [bad] })).toThrow(InvalidNameError);
    expect(() => rolePermissions("demo", "node", { nodeId: bad })).toThrow(InvalidNameError);
    expect(() => rolePermissions("demo", "bridge", { consumers: [bad] })).toThrow(InvalidNameError);
    expect(() => rolePermissions("demo", "bridge", { user: bad })).toThrow(InvalidNameError);
    expect(() => rolePermissions("demo", "bridge", { inboxPrefix: bad })).toThrow(InvalidNameError);
  });

  it("rejects an unknown role and empty lists (leave a list out to mean all)", () => {
    expect(() => rolePermissions("demo", "admin" as Role)).toThrow(/role "admin": must be one of node, bridge, daimon, gate/);
    expect(() => rolePermissions("demo", "bridge", { souls: [] })).toThrow(/empty/);
    expect(() => rolePermissions("demo", "gate", { skills: [] })).toThrow(/empty/);
  });

  it("every subject of every role stays inside its cluster, its stream's API and its own inbox", () => {
    const token = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
    fc.assert(
      fc.property(fc.constantFrom(...ROLES), token, token, fc.array(token, { minLength: 1, maxLength: 3 }), fc.array(token, { minLength: 1, maxLength: 3 }), (role, cluster, user, souls, skills) => {
        const p = rolePermissions(cluster, role, { user, souls, skills, nodeId: user });
        const stream = `ENSOUL_${cluster}`;
        const inside = (entry: string) => {
          const subject = entry.split(" ")[0];
          if (subject.startsWith(`ensoul.${cluster}.`) || subject === "$JS.API.INFO" || subject === `_INBOX_${user}.>`) return true;
          if (subject.startsWith(`$JS.ACK.${stream}.`)) return true;
          // The cluster's buckets (shared context, node and soul leases: a node's), and nothing of another's.
          const buckets = ["shared", "nodes", "leases"].map((b) => `ensoul_${cluster}_${b}`);
          if (buckets.some((bucket) => subject === `$KV.${bucket}.>` || subject === `$JS.FC.KV_${bucket}.>`)) return true;
          if (/^\$JS\.API\.(STREAM|CONSUMER|DIRECT)\.[A-Z.]+?\.KV_/.test(subject)) return buckets.some((bucket) => new RegExp(`\\.KV_${bucket}(\\.|$)`).test(subject));
          const api = /^\$JS\.API\.(STREAM|CONSUMER)\.(?:MSG\.NEXT|DURABLE\.CREATE|[A-Z]+)\.([^.]+)(?:\.([^.]+)(?:\.(.+))?)?$/.exec(subject);
          // The cluster stream, or the souls' history stream (failover).
          if (!api || (api[2] !== stream && api[2] !== `${stream}_HISTORY`)) return false;
          // A filter in a consumer-create subject must itself be inside the cluster.
          return api[4] === undefined || api[4].startsWith(`ensoul.${cluster}.`) || (api[3] === ">" && api[4] === undefined);
        };
        for (const s of [...p.publish.allow, ...p.subscribe.allow]) if (!inside(s)) throw new Error(`${role} ${s} escapes cluster ${cluster}`);
      }),
      { numRuns: 300 },
    );
  });
});
