/**
 * Chaos scenario 6, gate faults: remote skill gates that hang, crash or answer garbage. No
 * proposal gets through unverified.
 *
 * A node on a real nats-server hosts souls whose chain includes a remote gate; the skill's
 * verify subject is served only by a hostile raw responder (test/support/chaos/hostileGate.ts)
 * that, seeded, passes or refuses genuinely, or hangs, sends garbage, passes another request,
 * replays an old pass, answers in a wrong envelope version or kind, crashes its connection, or
 * leaves the queue group. Every proposal is verified twice (review before the turn commits,
 * dispatch before delivery) and streamed speech piece by piece (phase `stream`).
 *
 * What is checked, from outside, on the bus: every final speech and every streamed piece on the
 * says subjects was genuinely passed by the responder for that exact proposal, phase and text;
 * every `pass` decision the chain published was a genuine one; every perception ends answered
 * or refused, and a refusal is recorded (a `soul.intercepted` event, or a `node.blocked`
 * intercept at dispatch); and the node still serves once the attack stops.
 */
import { afterAll, expect, it } from "vitest";
import { defineSoul, useActions, usePerceptions, type MentalProcess } from "../../actors/soul/index.ts";
import type { Bus } from "../../runtime/bus/index.ts";
import { connectClusterBus, parseClusterConfig, startNode, type EnsoulNode } from "../../runtime/node/index.ts";
import { chaosSize, chaosTimeout } from "../support/chaos/chaosScale.ts";
import { percentile, reportChaos } from "../support/chaos/chaosReport.ts";
import { HOSTILE_ANSWERS, startHostileGate, type HostileGate } from "../support/chaos/hostileGate.ts";
import { watchTurnOutcomes } from "../support/chaos/turnOutcomes.ts";
import { perceive, uniqueCluster } from "../support/cluster/clusterKit.ts";
import { describeWithNats } from "../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../support/nats/natsServer.ts";
import { tempDirs } from "../support/tempDirs.ts";

const SOULS = chaosSize({ short: 6, full: 10 });
const TURNS_PER_SOUL = chaosSize({ short: 12, full: 60 });
const SKILL = "chaosguard";
/** Short, so a hang costs a verification a third of a second; the chain's own deadline is this plus 250 ms. */
const GATE_TIMEOUT_MS = 300;
/** Wide: a dispatch that keeps failing waits 0.25, 0.5, 1, 2, 4 s ... between tries. */
const SETTLE_MS = 120_000;

const STREAM_PAUSE_MS = 60;
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Says `spoken <tag>.` plainly on even turns; streams three sentences on odd ones. */
const speaker: MentalProcess = async ({ workingMemory }) => {
  const tag = /say#([\w-]+)/.exec(usePerceptions().invokingPerception.content)?.[1] ?? "none";
  const turn = Number(tag.split("-").at(-1));
  if (Number.isNaN(turn) || turn % 2 === 0) useActions().speak(`spoken ${tag}.`);
  else {
    useActions().speak(
      (async function* () {
        // Paced like a model's stream, so pieces are verified (and shown) before the utterance ends.
        yield `streamed ${tag}. `;
        await pause(STREAM_PAUSE_MS);
        yield "It goes on. ";
        await pause(STREAM_PAUSE_MS);
        yield "Done.";
      })(),
    );
  }
  return workingMemory;
};
const gatedSoul = defineSoul({ name: "Gated", persona: "A soul that speaks only through its gates.", initialProcess: speaker, processes: { speaker } });

describeWithNats("chaos: gate faults", () => {
  const dirs = tempDirs("ensoul-chaos-gates-");
  const cleanups: (() => Promise<void>)[] = [];
  let server: NatsServerHandle | undefined;
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await server?.dispose();
    dirs.cleanup();
  });

  it(
    `no proposal of ${SOULS * TURNS_PER_SOUL} turns gets through a hostile remote gate unverified, and the node keeps serving`,
    async () => {
      server = await startNatsServer({ jetstream: true });
      const cluster = uniqueCluster("chaosgates");
      const gate: HostileGate = await startHostileGate({ url: server.url, cluster, skill: SKILL, seed: 6_017, hostileRate: 0.35, refuseRate: 0.1, awayMs: 50, lateMs: GATE_TIMEOUT_MS + 200 });
      cleanups.push(() => gate.close());
      const souls = Array.from({ length: SOULS }, (_, i) => `gated${i}`);
      const config = parseClusterConfig({
        cluster,
        souls: souls.map((id) => ({ id, blueprint: gatedSoul })),
        gates: [{ remote: SKILL, priority: 10, timeoutMs: GATE_TIMEOUT_MS }],
        runtime: { heartbeatMs: 500, ackWaitMs: 10_000 },
      });
      const node: EnsoulNode = await startNode({ config, nats: { servers: server.url, reconnectTimeWaitMs: 100 }, nodeId: "n1", data: dirs.make(), store: { noSync: true }, log: () => undefined });
      cleanups.push(() => node.stop());
      const client: Bus = await connectClusterBus({ servers: server.url, cluster, reconnectTimeWaitMs: 100 });
      cleanups.push(() => client.close());
      const seen = watchTurnOutcomes(client, cluster);
      cleanups.push(async () => seen.stop());

      const tagOf = new Map<string, string>();
      const turnMs: number[] = [];
      const refusedAtDispatch = (id: string) => seen.eventsOf("node.blocked", id).some((e) => (e.body.data as { decision?: string }).decision === "intercept");
      const settled = (id: string) => seen.finals.has(id) || seen.eventsOf("soul.intercepted", id).length > 0 || refusedAtDispatch(id);
      const ask = async (soul: string, tag: string): Promise<string> => {
        const t0 = performance.now();
        const env = await perceive(client, soul, `say#${tag}`);
        tagOf.set(env.id, tag);
        // The turn is over when it committed (its speech may still wait for a dispatch verdict).
        await seen.until(() => seen.eventsOf("soul.turn", env.id).length + seen.eventsOf("soul.error", env.id).length > 0, 60_000, `the turn of ${tag}`);
        turnMs.push(performance.now() - t0);
        return env.id;
      };

      const started = performance.now();
      const sent = (await Promise.all(souls.map(async (soul) => {
        const ids: string[] = [];
        for (let t = 0; t < TURNS_PER_SOUL; t++) ids.push(await ask(soul, `${soul}-${t}`));
        return ids;
      }))).flat();
      const turnsS = (performance.now() - started) / 1000;
      // Speech held back by a dispatch the gate would not decide goes out with backoff; wait for
      // all of it under attack, so every delivery in the count was decided by the hostile gate.
      await seen.until(() => sent.every(settled), SETTLE_MS, "every perception to be answered or refused");
      const settledS = (performance.now() - started) / 1000;
      const hostileRequests = gate.requests;
      const answers = { ...gate.answers };

      // 1. Nothing on the says subjects that the gate did not genuinely pass, for that proposal,
      //    phase and text: finals at review and at dispatch, streamed pieces at phase stream.
      const genuine = (id: string, phase: string) => gate.passed.get(`${id}|${phase}`) ?? [];
      const finals = seen.speech.filter((s) => s.body.final);
      for (const f of finals) {
        expect(genuine(f.body.proposalId, "review"), `review of ${f.body.proposalId}`).toContain(f.body.text);
        expect(genuine(f.body.proposalId, "dispatch"), `dispatch of ${f.body.proposalId}`).toContain(f.body.text);
      }
      const streamed = new Map<string, string>();
      const pieces = seen.speech.filter((s) => !s.body.final);
      for (const c of pieces) {
        const soFar = (streamed.get(c.body.proposalId) ?? "") + c.body.text;
        streamed.set(c.body.proposalId, soFar);
        expect(genuine(c.body.proposalId, "stream"), `stream of ${c.body.proposalId}`).toContain(soFar);
      }

      // 2. The chain never called a hostile answer a pass: each pass it published is a genuine one.
      const decisions = (seen.events.get("gate.decision") ?? []).map((e) => e.body.data as { proposalId: string; decision: string; phase?: string; gate: string });
      const chainPasses = decisions.filter((d) => d.gate === SKILL && d.decision === "pass");
      for (const d of chainPasses) expect(gate.passed.has(`${d.proposalId}|${d.phase}`), `pass of ${d.proposalId} at ${d.phase}`).toBe(true);
      const blocking = decisions.filter((d) => d.gate === SKILL && d.decision !== "pass");
      // Why the chain blocked, by what the reason says (remoteGate.ts and verdictWire.ts word them).
      const why = (reason = "") =>
        /chaos: refused/.test(reason) ? "refused" : /malformed verdict/.test(reason) ? "malformed" : /no skill-gate actor/.test(reason) ? "no responders" : /did not answer|timed out/.test(reason) ? "timeout" : "other";
      const blockedBy = new Map<string, number>();
      for (const d of blocking) {
        const reason = why((d as { reason?: string }).reason);
        blockedBy.set(reason, (blockedBy.get(reason) ?? 0) + 1);
      }

      // 3. Every perception ended exactly one way, and each refusal is on record.
      const answered = sent.filter((id) => seen.finals.has(id));
      const refusedReview = sent.filter((id) => !seen.finals.has(id) && seen.eventsOf("soul.intercepted", id).length > 0);
      const refusedDispatch = sent.filter((id) => !seen.finals.has(id) && refusedAtDispatch(id));
      for (const id of sent) {
        expect(seen.finals.get(id)?.length ?? 0, `finals of ${tagOf.get(id)}`).toBeLessThanOrEqual(1);
        const ways = [seen.finals.has(id), seen.eventsOf("soul.intercepted", id).length > 0, refusedAtDispatch(id)].filter(Boolean).length;
        expect(ways, `outcomes of ${tagOf.get(id)}`).toBe(1);
        const text = seen.finals.get(id)?.[0]?.body.text;
        if (text !== undefined) expect(text, tagOf.get(id)).toMatch(new RegExp(`^(spoken|streamed) ${tagOf.get(id)}\\.`));
      }
      expect(answered.length + refusedReview.length + refusedDispatch.length).toBe(sent.length);
      // A refusal at review is on record twice: the soul's interception and the chain's decision
      // for that proposal (published a moment after, so waited for).
      const refusedProposal = (id: string) => (seen.eventsOf("soul.intercepted", id)[0]?.body.data as { proposal: { id: string } }).proposal.id;
      const decided = (id: string) => (seen.events.get("gate.decision") ?? []).some((e) => {
        const d = e.body.data as { proposalId: string; decision: string; phase?: string };
        return d.proposalId === refusedProposal(id) && d.phase === "review" && d.decision !== "pass";
      });
      await seen.until(() => refusedReview.every(decided), 10_000, "a blocking review decision for every interception");
      expect([...seen.finals.keys()].filter((id) => !tagOf.has(id))).toEqual([]);
      // A dispatch the gate would not decide holds back what the soul said after it: each soul's
      // speech reaches the says subject in the order of its turns, retries or not.
      for (const soul of souls) {
        const order = finals.filter((f) => f.from === soul).map((f) => Number(tagOf.get(f.causation ?? "")?.split("-").at(-1)));
        expect(order, `order of ${soul}'s speech`).toEqual([...order].sort((a, b) => a - b));
      }
      // The attack really happened, in every form, and both outcomes occurred.
      for (const kind of HOSTILE_ANSWERS) expect(answers[kind], kind).toBeGreaterThan(0);
      expect(answered.length).toBeGreaterThan(0);
      expect(refusedReview.length).toBeGreaterThan(0);
      expect(decisions.filter((d) => d.phase === "stream").length, "streamed speech checked piece by piece").toBeGreaterThan(0);
      expect(blockedBy.get("other") ?? 0, "blocks for a reason none of the faults explains").toBe(0);

      // 4. The node keeps serving: with the attack over, every soul answers a new perception.
      gate.honest = true;
      expect(node.status().state).toBe("running");
      const last = await Promise.all(souls.map((soul) => ask(soul, `${soul}-final`)));
      await seen.until(() => last.every((id) => seen.finals.has(id)), 30_000, "every soul's answer after the attack");
      for (const id of last) expect(seen.finals.get(id)?.map((f) => f.body.text)).toEqual([`spoken ${tagOf.get(id)}.`]);
      for (const soul of souls) expect((await node.soul(soul)).state().status, soul).toBe("active");

      reportChaos("gate faults", [
        { name: "souls", value: SOULS },
        { name: "turns sent", value: sent.length },
        { name: "gate requests", value: hostileRequests },
        ...(["pass", "refuse", ...HOSTILE_ANSWERS] as const).map((k) => ({ name: `answers: ${k}`, value: answers[k] })),
        { name: "late passes (ignored)", value: gate.late.size },
        { name: "chain passes (all genuine)", value: chainPasses.length },
        { name: "chain blocks", value: blocking.length },
        ...[...blockedBy].map(([reason, n]) => ({ name: `  blocked: ${reason}`, value: n })),
        { name: "answered", value: answered.length },
        { name: "refused at review", value: refusedReview.length },
        { name: "refused at dispatch", value: refusedDispatch.length },
        { name: "streamed pieces (all genuine)", value: pieces.length },
        { name: "turn p50", value: Math.round(percentile(turnMs, 50)), unit: "ms" },
        { name: "turn p95", value: Math.round(percentile(turnMs, 95)), unit: "ms" },
        { name: "wall time (turns)", value: Math.round(turnsS * 10) / 10, unit: "s" },
        { name: "wall time (all settled)", value: Math.round(settledS * 10) / 10, unit: "s" },
      ]);
    },
    chaosTimeout({ short: 150_000, full: 1_200_000 }),
  );
});
