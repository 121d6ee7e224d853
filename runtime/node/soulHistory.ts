/**
 * A soul's history as node control reports it, for the debugger (docs/DEBUGGER.md): the soul
 * now (`soul`), its committed turns with what happened in them (`turns`), and a revert to
 * the state after an earlier turn (`revert`), made in the running node.
 *
 * A revert goes through the soul host's `reload`: the soul stops after its running turn
 * (perceptions waiting stay in its inbox), the store rolls it back in one transaction, and it
 * is activated again from the store, which replays what waited. So a perception in flight is
 * answered once, after the revert or before it, never lost.
 */
import type { SoulBlueprint, SoulHost, StoredTurnTrace } from "../../actors/soul/index.ts";
import { toPromptMessage, type Memory } from "../cognition/index.ts";
import { TurnNotKeptError, userModels, type ActorHistory, type LoggedTurn, type Store } from "../store/index.ts";
import {
  encodeControl,
  MAX_REPLY_BYTES,
  type RevertRecord,
  type RevertReply,
  type RevertRequest,
  type SoulDetailReply,
  type SoulStatusEntry,
  type StepRecord,
  type TurnRecord,
  type TurnsReply,
  type TurnsRequest,
} from "./controlProtocol.ts";
import { ControlRequestError } from "./controlRequestError.ts";
import { failedPerceptionsOf } from "./failedPerceptionList.ts";
import type { EventPublisher } from "./soulEvents.ts";
import { TransitionCounts } from "./transitionCounts.ts";

export interface SoulHistory {
  soul(soulId: string): SoulDetailReply;
  turns(request: TurnsRequest): TurnsReply;
  revert(request: RevertRequest): Promise<RevertReply>;
}

export interface SoulHistoryContext {
  nodeId: string;
  hosted: ReadonlyMap<string, unknown>;
  known: ReadonlySet<string>;
  blueprints: ReadonlyMap<string, SoulBlueprint>;
  store: Store;
  host: SoulHost;
  /** The soul's entry in the node's status. */
  statusOf(soulId: string): SoulStatusEntry | undefined;
  /** The soul's machine definition, as `ensoul export` writes it. */
  machineOf(blueprint: SoulBlueprint): unknown;
  events: EventPublisher;
  now(): number;
  /**
   * Under failover: the local copy is brought up to the soul's history before a revert reads
   * it (`prepare`), and the reverted soul goes to its history as a snapshot (`reverted`), or the
   * next node to take it would not know of the revert.
   */
  failover?: { prepare(soulId: string): Promise<void>; snapshot(soulId: string): Promise<void> };
}

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

export function soulHistory(c: SoulHistoryContext): SoulHistory {
  const transitions = new TransitionCounts();
  const hostedSoul = (soulId: string): void => {
    if (c.hosted.has(soulId)) return;
    if (c.known.has(soulId)) throw new ControlRequestError("not-found", `soul '${soulId}' is not hosted on node ${c.nodeId}`);
    throw new ControlRequestError("not-found", `unknown soul '${soulId}'`);
  };
  const historyOf = (soulId: string): ActorHistory => {
    const history = c.store.actor(soulId).history;
    if (!history) throw new ControlRequestError("conflict", `node ${c.nodeId} keeps no turn log (store.turnLog is off), so soul '${soulId}' has no turns to show or revert to`);
    return history;
  };

  return {
    soul(soulId) {
      hostedSoul(soulId);
      return soulDetail(c, soulId, transitions);
    },
    turns({ soulId, before, limit }) {
      hostedSoul(soulId);
      const count = Math.min(MAX_LIMIT, Math.max(1, limit ?? DEFAULT_LIMIT));
      const page = historyOf(soulId).page(count, before);
      const failed = before === undefined ? failedPerceptionsOf(c.store.actor(soulId)) : [];
      return fitTurns(soulId, c.nodeId, page, failed, count);
    },
    async revert({ soulId, turn, by }) {
      hostedSoul(soulId);
      const history = historyOf(soulId);
      const who = by ?? "node control";
      try {
        const outcome = await c.host.reload(soulId, async () => {
          await c.failover?.prepare(soulId);
          const reverted = await history.revertTo(turn, who, c.now());
          await c.failover?.snapshot(soulId);
          return reverted;
        });
        const revert: RevertRecord = { turn: outcome.turn, toTurn: outcome.toTurn, by: outcome.by, at: outcome.at };
        c.events.node(soulId, "revert", { ...revert });
        return { soulId, node: c.nodeId, revert };
      } catch (err) {
        if (err instanceof TurnNotKeptError) throw new ControlRequestError("not-found", err.message);
        throw err;
      }
    },
  };
}

function soulDetail(c: SoulHistoryContext, soulId: string, transitions: TransitionCounts): SoulDetailReply {
  const actor = c.store.actor(soulId);
  const blueprint = c.blueprints.get(soulId) as SoulBlueprint;
  const state = actor.loadState();
  const models = userModels(c.store, soulId);
  const history = actor.history;
  const status = c.statusOf(soulId) ?? { id: soulId, name: blueprint.name, process: state?.currentProcess ?? blueprint.initialProcess, turns: state?.turn ?? 0, pending: 0, status: "passivated" as const };
  return {
    soulId,
    node: c.nodeId,
    soul: status,
    workingMemory: state?.workingMemory ?? { soulName: blueprint.name, memories: [], regionOrder: [] },
    soulMemory: state?.soulMemory ?? {},
    processMemory: state?.processMemory ?? {},
    schedules: actor.schedules(),
    userModels: models.users().map((userId) => ({ userId, versions: models.forUser(userId).history().map((v) => ({ ...v })) })),
    ...(history ? { turnLog: { keep: history.keep, ...history.bounds() } } : {}),
    machine: c.machineOf(blueprint),
    transitions: history ? transitions.of(soulId, history) : {},
  };
}

function fitTurns(soulId: string, nodeId: string, page: LoggedTurn[], failed: TurnsReply["failed"], limit: number): TurnsReply {
  const records = page.filter((e) => e.kind !== "revert").map((e) => turnRecord(soulId, e));
  const reverts = page.filter((e) => e.kind === "revert").map(revertRecord);
  const turnNumbers = [...new Set(records.map((r) => r.turn))];
  const build = (count: number, squeeze: boolean): TurnsReply => {
    const kept = new Set(turnNumbers.slice(0, count));
    const turns = records.filter((r) => kept.has(r.turn)).map((r) => (squeeze ? squeezed(r) : r));
    const oldest = turns.length ? Math.min(...turns.map((t) => t.turn)) : undefined;
    const more = count < turnNumbers.length || (turnNumbers.length === limit && oldest !== undefined && oldest > 1);
    return { soulId, node: nodeId, turns, reverts: reverts.filter((r) => oldest === undefined || r.turn >= oldest), failed, ...(more && oldest !== undefined ? { next: oldest } : {}) };
  };
  let count = turnNumbers.length;
  let reply = build(count, false);
  while (encodeControl(reply).length > MAX_REPLY_BYTES && count > 1) reply = build((count = Math.ceil(count / 2)), false);
  if (encodeControl(reply).length > MAX_REPLY_BYTES) reply = build(1, true);
  return reply;
}

function turnRecord(soulId: string, e: LoggedTurn): TurnRecord {
  const trace = e.trace as StoredTurnTrace | undefined;
  const after = ((e.state.workingMemory as { memories?: unknown[] } | undefined)?.memories ?? []) as unknown[];
  const proposals = trace?.proposals ?? [];
  const answered = proposals.some((p) => p.kind === "speak" && p.verdict !== "intercepted");
  const intercepted = proposals.filter((p) => p.verdict === "intercepted");
  const record: TurnRecord = {
    turn: e.turn,
    turnId: `${soulId}:${e.turn}${e.kind === "subprocess" ? ":sub" : ""}`,
    kind: e.kind === "subprocess" ? "subprocess" : "turn",
    at: e.at,
    ...(trace ? { durationMs: trace.durationMs, perception: { ...trace.perception } } : {}),
    process: { from: trace?.from ?? e.state.currentProcess, to: e.state.currentProcess, path: trace?.path ?? [] },
    memory: { before: e.memoriesBefore, after },
    steps: (trace?.steps ?? []).map((s) => stepRecord(s, e.memoriesBefore)),
    proposals: proposals.map((p) => ({ ...p })),
    whispers: trace?.whispers ?? [],
    kv: e.kv,
    answered,
    state: { soulMemory: e.state.soulMemory, processMemory: e.state.processMemory, schedules: e.schedules },
  };
  if (!answered && e.kind === "turn") {
    record.silence = intercepted.length
      ? { reason: "intercepted", detail: intercepted.map((p) => `${p.kind} ${p.id}: ${p.reason ?? "intercepted"}`).join("; ") }
      : { reason: "no-speech", detail: "the turn's processes said nothing" };
  }
  return record;
}

function stepRecord(s: StoredTurnTrace["steps"][number], before: unknown[] | null): StepRecord {
  const memories: unknown[] = [];
  let missing = 0;
  for (const segment of s.memory) {
    if (!Array.isArray(segment)) memories.push(segment.memory);
    else if (before) memories.push(...before.slice(segment[0], segment[0] + segment[1]));
    else missing += segment[1];
  }
  const prompt = [
    ...(missing ? [{ role: "system", content: `[${missing} earlier memories are no longer kept]` }] : []),
    ...memories.map((m) => toPromptMessage(m as Memory)),
    ...s.command,
  ].map(({ role, content, name }) => ({ role, content, ...(name !== undefined ? { name } : {}) }));
  return {
    step: s.step,
    model: s.model,
    prompt,
    ...(s.raw !== undefined ? { raw: s.raw } : {}),
    ...(s.value !== undefined ? { value: s.value } : {}),
    tokens: s.tokens,
    latencyMs: s.latencyMs,
    ...(s.error !== undefined ? { error: s.error } : {}),
  };
}

function revertRecord(e: LoggedTurn): RevertRecord {
  return { turn: e.turn, toTurn: e.revert?.toTurn ?? e.turn, by: e.revert?.by ?? "", at: e.at };
}

/** A turn too large for one message: the newest 20 memories and the last message of each prompt. */
function squeezed(r: TurnRecord): TurnRecord {
  const tail = (list: unknown[] | null) => (list && list.length > 20 ? list.slice(-20) : list);
  return {
    ...r,
    memory: { before: tail(r.memory.before), after: tail(r.memory.after) ?? [], truncated: true },
    steps: r.steps.map((s) => ({ ...s, prompt: s.prompt.slice(-1) })),
  };
}
