/**
 * What a fault-schedule test of the core turn path checks (perception intake and ack, the
 * turn's commit, outbox publish): perceptions sent to echo souls of a running node, every
 * final answer as a bridge sees it (AnswerLedger: a durable consumer on the says subjects),
 * the soul errors and dead letters that tell someone a perception was set aside, and, once
 * everything has settled, what each soul's LMDB holds.
 *
 * The invariants, per perception: answered at most once; settled, once the faults clear, as
 * exactly one of answered (its inbox entry done, the soul's working memory holding it once),
 * set aside with its error (inbox `error`, a `soul.error` naming it, nothing of it in memory)
 * or dead-lettered with its reason. Nothing is left pending.
 */
import { clusterSubjects, type Bus, type DeadLetter } from "../../../runtime/bus/index.ts";
import type { Store } from "../../../runtime/store/index.ts";
import { until, watchDead, watchEnvelopes, type Watch } from "../cluster/busWatch.ts";
import { perceive } from "../cluster/clusterKit.ts";
import { AnswerLedger, type Sent } from "../chaos/fleet.ts";
import type { FaultPlan } from "../../../runtime/faults/index.ts";

/** The fault points of the core turn path. */
export const TURN_PATH_POINTS = ["perception.intake", "perception.ack", "turn.commit", "outbox.publish"] as const;

export interface TurnPathWatch {
  readonly ledger: AnswerLedger;
  /** `soul.error` events, by the perception they name. */
  readonly errors: Map<string, string[]>;
  readonly dead: Watch<DeadLetter>;
  stop(): void;
}

/** Starts watching answers, soul errors and dead letters on the bus (before anything is sent). */
export async function watchTurnPath(bus: Bus, ledgerConsumer: string): Promise<TurnPathWatch> {
  const subjects = clusterSubjects(bus.cluster);
  const ledger = await AnswerLedger.watch(bus, ledgerConsumer);
  const events = watchEnvelopes(bus, subjects.allSouls("events"), "event");
  const dead = watchDead(bus, subjects.dead);
  const errors = new Map<string, string[]>();
  const seen = events.seen;
  return {
    ledger,
    dead,
    get errors() {
      errors.clear();
      for (const e of seen) {
        const data = (e.body.data ?? {}) as { perceptionId?: string; message?: string; phase?: string };
        if (e.body.type !== "soul.error" || data.perceptionId === undefined || data.phase !== "process") continue;
        errors.set(data.perceptionId, [...(errors.get(data.perceptionId) ?? []), String(data.message)]);
      }
      return errors;
    },
    stop() {
      events.stop();
      dead.stop();
    },
  };
}

/** Sends `count` perceptions, dealt round-robin over `souls`; resolves with what was sent. */
export async function sendPerceptions(bus: Bus, souls: readonly string[], count: number, tag: string): Promise<Sent[]> {
  const sent: Sent[] = [];
  for (let i = 0; i < count; i++) {
    const soul = souls[i % souls.length] as string;
    const content = `${tag} ${i}`;
    const env = await perceive(bus, soul, content);
    sent.push({ id: env.id, soul, content, at: Date.now() });
  }
  return sent;
}

export type Outcome = "answered" | "failed" | "dead" | "pending";

/** What became of one perception, as the bus and the soul's inbox tell it. */
export function outcomeOf(s: Sent, watch: TurnPathWatch, store: Store): Outcome {
  if (watch.ledger.answered(s.id)) return "answered";
  if (watch.dead.seen.some((d) => d.subject.endsWith(`.${s.soul}.perceive`) && names(d, s.id))) return "dead";
  const entry = store.actor(s.soul).inboxEntry(s.id);
  return entry?.status === "error" && watch.errors.has(s.id) ? "failed" : "pending";
}

/** The dead letter is of this perception: its head (the envelope's first bytes) holds the id. */
function names(d: DeadLetter, id: string): boolean {
  return Buffer.from(d.head, "base64").toString("latin1").includes(id);
}

/**
 * Waits until every perception has an outcome, then until the plan has been quiet (no point
 * reached) for `quietMs`, so a redelivery or a retried publish still on its way is seen.
 */
export async function settle(sent: readonly Sent[], watch: TurnPathWatch, store: Store, plan: FaultPlan, ms: number, quietMs = 700): Promise<void> {
  await until(() => sent.every((s) => outcomeOf(s, watch, store) !== "pending"), ms, () => `every perception settled: ${sent.map((s) => `${s.id}=${outcomeOf(s, watch, store)}`).join(", ")}; faults ${JSON.stringify(plan.injected().map((o) => [o.point, o.fault?.kind, o.detail]))}`);
  // Every occurrence of the four points so far (plan.seen keeps only the last ones).
  const count = () => TURN_PATH_POINTS.reduce((n, point) => n + plan.count(point), 0);
  const started = Date.now();
  for (let last = count(); ; last = count()) {
    await new Promise((r) => setTimeout(r, quietMs));
    if (count() === last) return;
    if (Date.now() - started > ms) {
      const recent = plan.seen.slice(-8).map((o) => `${o.point} ${JSON.stringify(o.detail)}${o.fault ? ` (${o.fault.kind})` : ""}`);
      throw new Error(`the turn path never went quiet in ${ms} ms after every perception settled; last occurrences:\n${recent.join("\n")}`);
    }
  }
}

/** The perception ids a soul's committed working memory holds, in order (duplicates kept). */
export function perceivedInMemory(store: Store, soul: string): string[] {
  const memories = ((store.actor(soul).loadState()?.workingMemory as { memories?: { role: string; metadata?: { perceptionId?: string } }[] } | undefined)?.memories ?? []);
  return memories.filter((m) => m.role === "user").map((m) => m.metadata?.perceptionId ?? "?");
}

/** Everything wrong with the outcome, as readable lines (empty: the invariants hold). */
export function auditTurnPath(sent: readonly Sent[], watch: TurnPathWatch, store: Store): string[] {
  const problems: string[] = [];
  const audit = watch.ledger.audit(sent);
  for (const d of audit.duplicates) problems.push(`answered ${d.length} times: ${d[0]?.causation} (${d.map((a) => a.id).join(", ")})`);
  for (const w of audit.wrong) problems.push(`wrong answer to ${w.causation}: ${w.text} from ${w.from}`);
  for (const s of audit.strays) problems.push(`an answer to nothing sent: ${s.causation}`);
  const memory = new Map<string, string[]>();
  for (const s of sent) if (!memory.has(s.soul)) memory.set(s.soul, perceivedInMemory(store, s.soul));
  for (const s of sent) {
    const outcome = outcomeOf(s, watch, store);
    const inMemory = (memory.get(s.soul) ?? []).filter((id) => id === s.id).length;
    const entry = store.actor(s.soul).inboxEntry(s.id);
    if (outcome === "pending") problems.push(`${s.id} (${s.content}) neither answered, set aside nor dead-lettered: inbox ${entry?.status ?? "none"}`);
    if (outcome === "answered" && (inMemory !== 1 || entry?.status !== "done")) problems.push(`${s.id} (${s.content}) answered, but ${inMemory} time(s) in memory, inbox ${entry?.status ?? "none"}`);
    if (outcome === "answered" && watch.errors.has(s.id)) problems.push(`${s.id} (${s.content}) answered, and also reported failed: ${watch.errors.get(s.id)?.join("; ")}`);
    if (outcome !== "answered" && inMemory > 0) problems.push(`${s.id} (${s.content}) ${outcome}, yet ${inMemory} time(s) in memory`);
  }
  return problems;
}
