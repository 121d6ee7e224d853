/**
 * Skill-gate actors over a bus, run against the in-process bus and a real nats-server with
 * the same assertions (skillGate.inProcess.test.ts, skillGate.nats.test.ts).
 */
import { afterEach, expect, it } from "vitest";
import {
  bouncer,
  createGateChain,
  GATE_DECISION_EVENT,
  lengthGate,
  publishDecisions,
  remoteGate,
  startSkillGate,
  type Gate,
  type GateDecision,
  type SkillGateHandle,
} from "../../../actors/gate/index.ts";
import type { Proposal } from "../../../actors/vocabulary/Proposal.ts";
import {
  clusterSubjects,
  decodeDeadLetter,
  decodeEnvelope,
  encodeEnvelope,
  makeEnvelope,
  type Bus,
  type BusMessage,
  type DeadLetter,
  type Envelope,
} from "../../../runtime/bus/index.ts";

/** Two ends of one cluster: where the skill-gate actors run, and where the chain runs. */
export interface BusPair {
  server: Bus;
  client: Bus;
}
export type BusPairFactory = (cluster: string) => Promise<BusPair>;

let clusterSeq = 0;
const uniqueCluster = () => `gate_${process.pid}_${Date.now().toString(36)}_${++clusterSeq}`;

let proposalSeq = 0;
function proposal(overrides: Partial<Proposal> = {}): Proposal {
  const n = ++proposalSeq;
  return { id: `soul-a:${n}:0`, soulId: "soul-a", turnId: `soul-a:${n}`, seq: 0, kind: "speak", content: "hello", ts: Date.now(), ...overrides };
}

const anthropicKey = ["sk", "ant", "api03", "Xy7kQ2mN9pL4vR8tW1zB6cD3fG5hJ0aS"].join("-");

async function waitFor(cond: () => boolean, ms = 5_000, what = "condition"): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Resolves once the server has processed every subscription this bus made so far: a
 * request to ourselves on the same connection comes back only after them. Another
 * connection's request can then find the subscribers.
 */
let flushSeq = 0;
async function flush(bus: Bus): Promise<void> {
  const subject = `flush.${bus.cluster}.${++flushSeq}`;
  const sub = bus.subscribe(subject, (m) => void m.respond(new Uint8Array([1])));
  await bus.request(subject, new Uint8Array(), { timeoutMs: 5_000 });
  sub.unsubscribe();
}

export function skillGateSuite(makePair: BusPairFactory): void {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  const setup = async () => {
    const cluster = uniqueCluster();
    const pair = await makePair(cluster);
    cleanups.push(async () => {
      await pair.client.close();
      if (pair.server !== pair.client) await pair.server.close();
    });
    const serve = async (gate: Gate, opts: { skill?: string; deadlineMs?: number } = {}): Promise<SkillGateHandle> => {
      const handle = startSkillGate({ bus: pair.server, cluster, gate, ...opts });
      cleanups.push(() => handle.stop());
      await flush(pair.server);
      return handle;
    };
    /** A raw responder on a skill's verify subject, for misbehaving gates. */
    const rawResponder = async (skill: string, answer: (msg: BusMessage, request: Envelope | null) => void) => {
      const sub = pair.server.subscribe(clusterSubjects(cluster).gateVerify(skill), (msg) => {
        const decoded = decodeEnvelope(msg.data);
        answer(msg, decoded.ok ? decoded.envelope : null);
      }, { queue: skill });
      cleanups.push(async () => sub.unsubscribe());
      await flush(pair.server);
    };
    return { cluster, ...pair, serve, rawResponder };
  };

  it("a remote skill-gate actor blocks a proposal, passes a clean one and transforms a long one", async () => {
    const { cluster, client, serve } = await setup();
    const security = await serve(bouncer({ name: "security" }));
    await serve(lengthGate({ maxChars: 40 }), { skill: "length" });
    const chain = createGateChain([
      remoteGate({ bus: client, cluster, skill: "security", priority: 100, timeoutMs: 2_000 }),
      remoteGate({ bus: client, cluster, skill: "length", priority: 10, timeoutMs: 2_000 }),
    ]);

    const leaked = await chain.run(proposal({ content: `my key: ${anthropicKey}` }));
    expect(leaked).toMatchObject({ ok: false, gate: "security", decision: "intercept" });
    expect(!leaked.ok && leaked.interception.reason).toContain("an Anthropic API key");

    const clean = proposal({ content: "a friendly word" });
    const passed = await chain.run(clean);
    expect(passed.ok && passed.proposal).toEqual(clean);

    const long = proposal({ content: "one two three four five six seven eight nine ten eleven" });
    const shortened = await chain.run(long);
    expect(shortened.ok && shortened.proposal).toEqual({ ...long, content: "one two three four five … [truncated]" });
    expect(security.stats()).toMatchObject({ served: 3, intercepted: 1, passed: 2 });
    expect(security.serving()).toBe(true);
  });

  it("shares requests between two actors in the same queue group: each request is answered once", async () => {
    const { cluster, client, serve } = await setup();
    const counting = (): Gate & { seen: string[] } => {
      const seen: string[] = [];
      return { name: "shared", priority: 1, seen, verify: (p) => (seen.push(p.id), p) };
    };
    const g1 = counting();
    const g2 = counting();
    const a1 = await serve(g1);
    const a2 = await serve(g2);
    const chain = createGateChain([remoteGate({ bus: client, cluster, skill: "shared", priority: 1, timeoutMs: 3_000 })]);
    const n = 40;
    const proposals = Array.from({ length: n }, () => proposal());
    const results = await Promise.all(proposals.map((p) => chain.run(p)));
    expect(results.every((r) => r.ok)).toBe(true);
    await waitFor(() => a1.stats().served + a2.stats().served === n, 5_000, "stats");
    // Each proposal reached exactly one instance...
    expect([...g1.seen, ...g2.seen].sort()).toEqual(proposals.map((p) => p.id).sort());
    // ...and both instances took a share.
    expect(g1.seen.length).toBeGreaterThan(0);
    expect(g2.seen.length).toBeGreaterThan(0);
    expect(a1.stats().served + a2.stats().served).toBe(n);
  });

  it("fails closed when the actor never answers, when nobody serves the skill, and when the actor's own deadline passes", async () => {
    const { cluster, client, serve, rawResponder } = await setup();
    await rawResponder("silent", () => undefined);
    const decisions: GateDecision[] = [];
    const silent = createGateChain([remoteGate({ bus: client, cluster, skill: "silent", priority: 1, timeoutMs: 150 })], { onDecision: (d) => decisions.push(d) });
    const started = Date.now();
    const r1 = await silent.run(proposal());
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r1).toMatchObject({ ok: false, decision: "timeout", gate: "silent" });
    expect(!r1.ok && r1.interception.reason).toContain("did not answer within 150 ms");
    expect(decisions.map((d) => d.decision)).toEqual(["timeout"]);

    const nobody = createGateChain([remoteGate({ bus: client, cluster, skill: "nobody", priority: 1, timeoutMs: 1_000 })]);
    const r2 = await nobody.run(proposal());
    expect(r2).toMatchObject({ ok: false, decision: "error" });
    expect(!r2.ok && r2.interception.reason).toContain("no skill-gate actor serves nobody");

    const sluggish: Gate = { name: "sluggish", priority: 1, verify: (p) => new Promise((r) => setTimeout(() => r(p), 1_000)) };
    const actor = await serve(sluggish, { deadlineMs: 50 });
    const slow = createGateChain([remoteGate({ bus: client, cluster, skill: "sluggish", priority: 1, timeoutMs: 2_000 })]);
    const r3 = await slow.run(proposal());
    expect(r3).toMatchObject({ ok: false, decision: "timeout" });
    expect(!r3.ok && r3.interception.reason).toContain("timed out after 50 ms");
    expect(actor.stats()).toMatchObject({ served: 1, errors: 1 });
  });

  it("fails closed on malformed verdicts", async () => {
    const { cluster, client, rawResponder } = await setup();
    const verdict = (request: Envelope | null, body: Record<string, unknown> & { verdict: "pass" | "transform" | "intercept" }, causation = request?.id) =>
      encodeEnvelope(makeEnvelope("verdict", "gate.rogue", "x", body, causation ? { causation } : {}));
    const answers: Record<string, (msg: BusMessage, request: Envelope | null) => void> = {
      garbage: (msg) => void msg.respond(new Uint8Array([0xc1, 0x00, 0xff])),
      notVerdict: (msg, req) => void msg.respond(encodeEnvelope(makeEnvelope("event", "gate.rogue", "x", { type: "hi" }, { causation: req?.id ?? "x" }))),
      wrongRequest: (msg, req) => void msg.respond(verdict(req, { verdict: "pass" }, "some-other-request")),
      emptyTransform: (msg, req) => void msg.respond(verdict(req, { verdict: "transform", proposal: { content: 5 } })),
      silentIntercept: (msg, req) => void msg.respond(verdict(req, { verdict: "intercept" })),
    };
    for (const [skill, answer] of Object.entries(answers)) {
      await rawResponder(skill, answer);
      const chain = createGateChain([remoteGate({ bus: client, cluster, skill, priority: 1, timeoutMs: 2_000 })]);
      const result = await chain.run(proposal());
      expect(result.ok, skill).toBe(false);
      expect(!result.ok && result.decision, skill).toBe("error");
      expect(!result.ok && result.interception.reason, skill).toContain("malformed verdict");
    }
    // A well-formed one from the same kind of responder does pass: the checks are not just failing everything.
    await rawResponder("honest", (msg, req) => void msg.respond(verdict(req, { verdict: "pass" })));
    const honest = createGateChain([remoteGate({ bus: client, cluster, skill: "honest", priority: 1, timeoutMs: 2_000 })]);
    expect((await honest.run(proposal())).ok).toBe(true);
  });

  it("answers a malformed request with an error verdict, dead-letters it, and keeps serving", async () => {
    const { cluster, client, serve } = await setup();
    const dead: DeadLetter[] = [];
    client.subscribe(clusterSubjects(cluster).dead, (m) => void dead.push(decodeDeadLetter(m.data) as DeadLetter));
    await flush(client);
    const actor = await serve(bouncer(), { skill: "guard" });
    const subject = clusterSubjects(cluster).gateVerify("guard");

    const garbage = decodeEnvelope(await client.request(subject, new Uint8Array([1, 2, 3]), { timeoutMs: 2_000 }));
    expect(garbage.ok && garbage.envelope.kind).toBe("verdict");
    expect(garbage.ok && garbage.envelope.body).toMatchObject({ verdict: "intercept", error: true, reason: expect.stringContaining("malformed request") });

    const notAProposal = makeEnvelope("proposal", "someone", "gate.guard", { kind: "speak", content: 7 });
    const reply = decodeEnvelope(await client.request(subject, encodeEnvelope(notAProposal), { timeoutMs: 2_000 }));
    expect(reply.ok && reply.envelope.causation).toBe(notAProposal.id);
    expect(reply.ok && reply.envelope.body).toMatchObject({ verdict: "intercept", error: true, reason: expect.stringContaining("invalid proposal") });

    await waitFor(() => dead.length === 2, 5_000, "dead letters");
    expect(dead.map((d) => d.subject)).toEqual([subject, subject]);
    expect(dead[1].reason).toContain("invalid proposal");

    const chain = createGateChain([remoteGate({ bus: client, cluster, skill: "guard", priority: 1, timeoutMs: 2_000 })]);
    expect((await chain.run(proposal())).ok).toBe(true);
    expect(actor.stats()).toMatchObject({ malformed: 2, served: 1 });
    expect(actor.serving()).toBe(true);
  });

  it("publishes every decision on the soul's events subject", async () => {
    const { cluster, client, server, serve } = await setup();
    const events: Envelope<"event">[] = [];
    server.subscribe(clusterSubjects(cluster).events("soul-a"), (m) => {
      const d = decodeEnvelope(m.data);
      if (d.ok && d.envelope.kind === "event") events.push(d.envelope);
    });
    await flush(server);
    await serve(bouncer(), { skill: "guard" });
    const publisher = publishDecisions(client, cluster);
    const crashy: Gate = {
      name: "crashy",
      priority: 1,
      trigger: (_ctx, p) => p.content === "crash",
      verify: () => {
        throw new Error("kaboom");
      },
    };
    const chain = createGateChain([remoteGate({ bus: client, cluster, skill: "guard", priority: 100 }), lengthGate({ maxChars: 20 }), crashy], { onDecision: publisher });
    const clean = proposal({ content: "hi" });
    const long = proposal({ content: "this is far too long to say" });
    const leak = proposal({ content: `key ${anthropicKey}` });
    const crash = proposal({ content: "crash" });
    for (const p of [clean, long, leak, crash]) await chain.run(p, { phase: "review" });
    await publisher.flush();
    await waitFor(() => events.length === 8, 5_000, "8 decision events");
    expect(events.every((e) => e.body.type === GATE_DECISION_EVENT && e.to === "soul-a" && e.from === "gate-chain")).toBe(true);
    const data = events.map((e) => e.body.data as { gate: string; proposalId: string; decision: string; reason?: string; phase?: string });
    expect(data.map((d) => [d.proposalId, d.gate, d.decision, d.phase])).toEqual([
      [clean.id, "guard", "pass", "review"],
      [clean.id, "length", "pass", "review"],
      [long.id, "guard", "pass", "review"],
      [long.id, "length", "transform", "review"],
      [leak.id, "guard", "intercept", "review"],
      [crash.id, "guard", "pass", "review"],
      [crash.id, "length", "pass", "review"],
      [crash.id, "crashy", "error", "review"],
    ]);
    expect(events[4].causation).toBe(leak.id);
    expect(data[4].reason).toContain("an Anthropic API key");
    expect(data[4].reason).not.toContain(anthropicKey);
    expect(data[3].reason).toBe("changed content");
    expect(data[7].reason).toBe("gate crashy failed: kaboom");
  });

  it("stops serving on stop(): the machine is stopped and the chain fails closed", async () => {
    const { cluster, client, serve } = await setup();
    const actor = await serve(bouncer(), { skill: "guard" });
    const chain = createGateChain([remoteGate({ bus: client, cluster, skill: "guard", priority: 1, timeoutMs: 500 })]);
    expect((await chain.run(proposal())).ok).toBe(true);
    await actor.stop();
    expect(actor.actor.getSnapshot().value).toBe("stopped");
    expect(actor.serving()).toBe(false);
    const after = await chain.run(proposal());
    expect(after.ok).toBe(false);
    expect(!after.ok && ["error", "timeout"]).toContain(!after.ok && after.decision);
  });
}
