/**
 * Chaos scenario 4, provider faults: 429s, 500s, hangs, cut streams and garbage in 30% of
 * calls over 1,000 turns (full; short: 100). Every turn ends: answered through the cascade, or
 * recorded as failed in the soul's inbox and retryable. No soul actor dies.
 *
 * Real parts only: the real Anthropic and Groq SDKs (through the runtime's adapters, withRetry
 * and the cascade) against the local wire servers, behind a seeded fault front
 * (test/support/chaos/faultyProvider.ts); a node on the in-process bus with real LMDB in a
 * temp dir; souls whose process streams an externalDialog into speech, as Claudius does. Half
 * the souls are asked one question at a time, half in bursts of five (failures then land while
 * perceptions queue), so latency is from publish to the turn's end, queueing included.
 *
 * A turn can fail only when every attempt of every provider failed, or when a stream was cut
 * after the soul already held chunks of it (no fall-through may splice two answers): about 6%
 * of turns at this fault rate. "Retryable" is shown, not assumed: once the outage is over the
 * failed entries are put back in line, the node restarts on the same data, and each of them is
 * answered exactly once.
 */
import { afterAll, describe, expect, it } from "vitest";
import { defineSoul, useActions, type MentalProcess } from "../../actors/soul/index.ts";
import { externalDialog } from "../../runtime/cognition/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../runtime/node/index.ts";
import { createAnthropicModel, createCascade, createGroqModel, ModelRegistry, withRetry } from "../../runtime/providers/index.ts";
import { chaosSize, chaosTimeout } from "../support/chaos/chaosScale.ts";
import { percentile, reportChaos } from "../support/chaos/chaosReport.ts";
import { PROVIDER_FAULTS, startFaultyProvider, type FaultyProvider } from "../support/chaos/faultyProvider.ts";
import { watchTurnOutcomes, type TurnOutcomes } from "../support/chaos/turnOutcomes.ts";
import { perceive } from "../support/cluster/clusterKit.ts";
import { tempDirs } from "../support/tempDirs.ts";
import { startAnthropicServer } from "../support/wire/anthropicServer.ts";
import { startGroqServer } from "../support/wire/groqServer.ts";
import type { RecordedRequest, ScriptedServer } from "../support/wire/scriptedServer.ts";

const SOULS = 10;
const TURNS_PER_SOUL = chaosSize({ short: 10, full: 100 });
const FAULT_RATE = 0.3;
/** The SDK deadline a hang must outlast; short, so a hang costs a turn one second, not two minutes. */
const CLIENT_TIMEOUT_MS = 1_000;
/** Wide: a turn may wait out two hangs and two retry-afters per provider on a busy machine. */
const TURN_DEADLINE_MS = 60_000;

const dirs = tempDirs("ensoul-chaos-providers-");
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  dirs.cleanup();
});

/** Streams one externalDialog into speech, as a conversational soul does. */
const converse: MentalProcess = async ({ workingMemory }) => {
  const [memory, stream] = await externalDialog(workingMemory, "Answer the question briefly.", { stream: true });
  useActions().speak(stream);
  return memory;
};
const chaosSoul = defineSoul({ name: "Chaotic", persona: "A soul that answers every question it is asked.", initialProcess: converse, processes: { converse } });

/**
 * The wire's clean answer names the question it answers (the last `ask#` tag in the prompt:
 * earlier turns' questions come before it), so an answer delivered for the wrong perception shows.
 */
function answer(request: RecordedRequest): string {
  const tag = [...request.rawBody.matchAll(/ask#([\w-]+)/g)].at(-1)?.[1] ?? "none";
  return `Chaotic said: "ans#${tag} is answered, all is well"`;
}

/** Why a turn failed, from the error the inbox keeps (ProviderError and CascadeError word them). */
function failureKind(error = ""): string {
  if (/every provider failed/.test(error)) return "every provider failed";
  if (/no complete answer within/.test(error)) return "stream stalled past the deadline";
  if (/connection dropped|stream broke|terminated/.test(error)) return "stream cut after chunks";
  return "other failure after chunks";
}

describe("chaos: provider faults", () => {
  it(
    `every one of ${SOULS * TURNS_PER_SOUL} turns ends (answered, or failed and retryable) with ${FAULT_RATE * 100}% faulty provider calls, and no soul dies`,
    async () => {
      const wires: ScriptedServer[] = await Promise.all([startAnthropicServer(), startGroqServer()]);
      cleanups.push(async () => void (await Promise.all(wires.map((w) => w.close()))));
      const [anthropicWire, groqWire] = wires as [ScriptedServer, ScriptedServer];
      const fronts: FaultyProvider[] = await Promise.all([
        startFaultyProvider(anthropicWire, { seed: 4_001, rate: FAULT_RATE, answer }),
        startFaultyProvider(groqWire, { seed: 4_002, rate: FAULT_RATE, answer }),
      ]);
      cleanups.push(async () => void (await Promise.all(fronts.map((f) => f.close()))));
      const [anthropicFront, groqFront] = fronts as [FaultyProvider, FaultyProvider];

      // As a node would build them: SDK retries off, the runtime's withRetry around each
      // provider (its delays kept small so the run stays short), the cascade over both.
      const registry = () => {
        const retry = { retries: 2, baseDelayMs: 20, maxDelayMs: 200 };
        const anthropic = withRetry(createAnthropicModel({ apiKey: "sk-ant-chaos-000111", baseURL: anthropicFront.url, defaultModel: "claude-chaos", timeoutMs: CLIENT_TIMEOUT_MS }), retry);
        const groq = withRetry(createGroqModel({ apiKey: "gsk_chaos_000222", baseURL: groqFront.url, defaultModel: "llama-chaos", timeoutMs: CLIENT_TIMEOUT_MS }), retry);
        return new ModelRegistry().register("chaos", createCascade([anthropic, groq], { penaltyMs: 500 }));
      };
      const souls = Array.from({ length: SOULS }, (_, i) => `soul${i}`);
      const config = parseClusterConfig({ cluster: "chaosproviders", souls: souls.map((id) => ({ id, blueprint: chaosSoul })), providers: { default: "chaos:cascade" } });
      const data = dirs.make();
      const logLines: string[] = [];
      const start = async (): Promise<{ node: EnsoulNode; outcomes: TurnOutcomes }> => {
        const node = await startNode({ config, data, store: { noSync: true }, registry: registry(), log: (line) => logLines.push(line) });
        const outcomes = watchTurnOutcomes(node.bus, node.cluster);
        cleanups.push(async () => (outcomes.stop(), await node.stop()));
        return { node, outcomes };
      };
      let { node, outcomes } = await start();

      const tagOf = new Map<string, string>();
      const soulOf = new Map<string, string>();
      const answeredMs: number[] = [];
      const failedMs: number[] = [];
      const ended = (id: string) => (outcomes.finals.get(id)?.length ?? 0) + outcomes.eventsOf("soul.error", id).length > 0;
      const send = async (soul: string, tag: string) => {
        const t0 = performance.now();
        const env = await perceive(node.bus, soul, `ask#${tag} how do you do?`);
        tagOf.set(env.id, tag);
        soulOf.set(env.id, soul);
        return { id: env.id, tag, t0 };
      };
      const end = async ({ id, tag, t0 }: { id: string; tag: string; t0: number }): Promise<string> => {
        await outcomes.until(() => ended(id), TURN_DEADLINE_MS, `the turn of ${tag} to end`);
        (outcomes.finals.has(id) ? answeredMs : failedMs).push(performance.now() - t0);
        return id;
      };
      const ask = async (soul: string, tag: string): Promise<string> => end(await send(soul, tag));

      // Each soul is one person's conversation: the next question once the last one ended. Every
      // other soul is asked in bursts of five, so failures also land while perceptions queue.
      const started = performance.now();
      const sent = (await Promise.all(souls.map(async (soul, i) => {
        const burst = i % 2 === 0 ? 1 : 5;
        const ids: string[] = [];
        for (let t = 0; t < TURNS_PER_SOUL; t += burst) {
          const batch = [];
          for (let b = t; b < Math.min(t + burst, TURNS_PER_SOUL); b++) batch.push(await send(soul, `${soul}-${b}`));
          for (const one of batch) ids.push(await end(one));
        }
        return ids;
      }))).flat();
      const elapsedS = (performance.now() - started) / 1000;
      await node.idle();
      const callsTo = { anthropic: anthropicFront.calls, groq: groqFront.calls };
      const calls = callsTo.anthropic + callsTo.groq;
      const faults = Object.fromEntries(PROVIDER_FAULTS.map((k) => [k, anthropicFront.faults[k] + groqFront.faults[k]]));
      // Chunks of a turn that then failed stay on the says subject with no final after them
      // (ungated souls stream as they go): counted, so a change in that is seen.
      const finalIds = new Set([...outcomes.finals.values()].flat().map((f) => f.body.proposalId));
      const orphaned = new Set(outcomes.speech.filter((c) => !c.body.final && !finalIds.has(c.body.proposalId)).map((c) => c.body.proposalId));

      // Every turn ended once, one way: answered with its own answer, or failed and kept.
      const answered = sent.filter((id) => outcomes.finals.has(id));
      const failed = sent.filter((id) => !outcomes.finals.has(id));
      expect(new Set(sent).size).toBe(sent.length);
      const failedBy = new Map<string, number>();
      for (const id of sent) {
        const finals = outcomes.finals.get(id) ?? [];
        const errors = outcomes.eventsOf("soul.error", id);
        expect(finals.length + errors.length, `outcomes of ${tagOf.get(id)}`).toBe(1);
        const entry = node.store.actor(soulOf.get(id)!).inboxEntry(id);
        if (finals.length === 1) {
          expect(finals[0]!.body.text, `answer to ${tagOf.get(id)}`).toBe(`ans#${tagOf.get(id)} is answered, all is well`);
          expect(entry?.status, `inbox of ${tagOf.get(id)}`).toBe("done");
        } else {
          expect(entry?.status, `inbox of ${tagOf.get(id)}`).toBe("error");
          // A provider's failure, named as one (a cut stream, or every provider failed).
          expect(entry?.error, `error of ${tagOf.get(id)}`).toMatch(/too late to fall through|every provider failed/);
          failedBy.set(failureKind(entry?.error), (failedBy.get(failureKind(entry?.error)) ?? 0) + 1);
        }
      }
      expect(answered.length + failed.length).toBe(SOULS * TURNS_PER_SOUL);
      // Speech only ever answers a perception that was sent, once.
      expect([...outcomes.finals.keys()].filter((id) => !tagOf.has(id))).toEqual([]);
      // The scenario really was chaotic: every kind of fault happened, and some turns failed.
      for (const kind of PROVIDER_FAULTS) expect(faults[kind], kind).toBeGreaterThan(0);
      expect(failed.length).toBeGreaterThan(0);
      expect(callsTo.groq, "calls that fell through to the second provider").toBeGreaterThan(0);
      expect(answered.length).toBeGreaterThan(failed.length);

      // No soul died: each is active, its inbox holds nothing unsettled, and it answers now.
      for (const fr of fronts) fr.quiet = true;
      for (const soul of souls) {
        expect((await node.soul(soul)).state().status, soul).toBe("active");
        expect(node.store.actor(soul).pendingInbox(), soul).toEqual([]);
      }
      const lastIds = await Promise.all(souls.map((soul) => ask(soul, `${soul}-final`)));
      for (const id of lastIds) expect(outcomes.finals.get(id)?.length, tagOf.get(id)).toBe(1);

      // Retryable: put every failed entry back in line and restart; each is answered once.
      for (const id of failed) await node.store.actor(soulOf.get(id)!).retryInbox(id);
      outcomes.stop();
      await node.stop();
      ({ node, outcomes } = await start());
      await outcomes.until(() => failed.every((id) => outcomes.finals.has(id)), TURN_DEADLINE_MS, "every retried perception to be answered");
      await node.idle();
      for (const id of failed) {
        expect(outcomes.finals.get(id)!.map((f) => f.body.text), tagOf.get(id)).toEqual([`ans#${tagOf.get(id)} is answered, all is well`]);
        expect(node.store.actor(soulOf.get(id)!).inboxEntry(id)?.status).toBe("done");
      }
      for (const soul of souls) expect(node.store.actor(soul).failedInbox(), soul).toEqual([]);

      reportChaos("provider faults", [
        { name: "souls", value: SOULS },
        { name: "turns sent", value: sent.length },
        { name: "provider calls", value: calls },
        { name: "  to anthropic (first)", value: callsTo.anthropic },
        { name: "  to groq (fallback)", value: callsTo.groq },
        ...PROVIDER_FAULTS.map((k) => ({ name: `faults: ${k}`, value: faults[k] ?? 0 })),
        { name: "fault share", value: Math.round(((Object.values(faults).reduce((a, b) => a + b, 0)) / calls) * 1000) / 10, unit: "%" },
        { name: "answered", value: answered.length },
        { name: "failed (kept, retryable)", value: failed.length },
        ...[...failedBy].map(([why, n]) => ({ name: `  ${why}`, value: n })),
        { name: "retried and answered", value: failed.length },
        { name: "failed turns with chunks out", value: orphaned.size },
        { name: "latency p50, publish to final", value: Math.round(percentile(answeredMs, 50)), unit: "ms" },
        { name: "latency p95, publish to final", value: Math.round(percentile(answeredMs, 95)), unit: "ms" },
        { name: "latency p50, publish to failure", value: failedMs.length ? Math.round(percentile(failedMs, 50)) : "-", unit: "ms" },
        { name: "wall time (turns)", value: Math.round(elapsedS * 10) / 10, unit: "s" },
        { name: "node log lines", value: logLines.length },
      ]);
    },
    chaosTimeout({ short: 120_000, full: 1_200_000 }),
  );
});
