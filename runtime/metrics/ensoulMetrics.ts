/**
 * ensoul's metrics, in Prometheus form (prom-client): what a node does, counted where it
 * happens (turns, provider calls, gate decisions, dead letters, budget refusals) and read at
 * scrape time where a count already exists (the node's registry: souls by status, queue
 * depth, perceptions and duplicates). The names are the contract a dashboard is built on;
 * README's "Operations" lists them.
 *
 * Labels are ids from the config and the code (soul ids, process, gate and provider names)
 * and closed lists (a dead letter's category, a provider failure's kind), never text that
 * arrived from outside: a label set must stay small, and a metric must not carry what a
 * stranger wrote.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** What the metrics read when scraped. */
export interface MetricsSources {
  /** The node's souls now: status (`active`, `running`, `passivated`, ...) and perceptions waiting. */
  souls(): readonly { id: string; status: string; pending: number }[];
  /** The node's running totals. */
  counters(): { perceptions: number; duplicates: number; whispers: number; dead: number };
}

export interface EnsoulMetrics {
  readonly registry: Registry;
  /** The exposition: `GET /metrics`. */
  text(): Promise<string>;
  readonly contentType: string;
  turn(soul: string, process: string, durationMs: number): void;
  turnFailed(soul: string, phase: string): void;
  providerCall(call: { provider: string; model: string; durationMs: number; inputTokens?: number; outputTokens?: number; failure?: string }): void;
  /** `phase`: review (before the commit), dispatch (before it leaves), stream (a streamed piece). */
  gateDecision(soul: string, gate: string, decision: string, phase: string): void;
  deadLetter(category: string): void;
  budgetRefused(soul: string, work: string): void;
}

/** Seconds: a turn is one model call on a fast provider, a minute on a slow ISM. */
const TURN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const CALL_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createEnsoulMetrics(sources: MetricsSources, info: { node: string; cluster: string }): EnsoulMetrics {
  const registry = new Registry();
  const registers = [registry];
  // Process metrics (CPU, memory, event-loop lag, handles) under their usual names.
  collectDefaultMetrics({ register: registry });

  new Gauge({ name: "ensoul_node_info", help: "The node and its cluster (always 1).", labelNames: ["node", "cluster"], registers }).set(info, 1);
  const turns = new Counter({ name: "ensoul_turns_total", help: "Committed turns, per soul and the process the turn ended in.", labelNames: ["soul", "process"], registers });
  const turnSeconds = new Histogram({ name: "ensoul_turn_duration_seconds", help: "How long a committed turn took, from taking its perception to its commit.", labelNames: ["soul", "process"], buckets: TURN_BUCKETS, registers });
  const failures = new Counter({ name: "ensoul_turn_failures_total", help: "Failed turns and subprocess runs (the soul reported an error), per soul and phase.", labelNames: ["soul", "phase"], registers });
  const calls = new Counter({ name: "ensoul_provider_calls_total", help: "Model calls, per provider and model.", labelNames: ["provider", "model"], registers });
  const callFailures = new Counter({ name: "ensoul_provider_failures_total", help: "Model calls that failed, per provider, model and kind (rate_limit, timeout, server, ...).", labelNames: ["provider", "model", "kind"], registers });
  const tokens = new Counter({ name: "ensoul_provider_tokens_total", help: "Tokens of successful model calls, per provider, model and direction (input, output).", labelNames: ["provider", "model", "direction"], registers });
  const callSeconds = new Histogram({ name: "ensoul_provider_call_duration_seconds", help: "How long a model call took, failed or not.", labelNames: ["provider", "model"], buckets: CALL_BUCKETS, registers });
  const decisions = new Counter({
    name: "ensoul_gate_decisions_total",
    help: "Gate decisions, per soul, gate, decision (pass, transform, intercept, ...) and phase (review, dispatch, stream).",
    labelNames: ["soul", "gate", "decision", "phase"],
    registers,
  });
  const dead = new Counter({ name: "ensoul_dead_letters_total", help: "Messages this node dead-lettered, per reason category.", labelNames: ["reason"], registers });
  const refusals = new Counter({ name: "ensoul_budget_refusals_total", help: "Model calls refused because the soul's budget was spent, per soul and the work that asked.", labelNames: ["soul", "work"], registers });

  new Gauge({
    name: "ensoul_souls",
    help: "The node's souls by status: active (in memory), running (in a turn), passivated (on disk only), expired, stopped.",
    labelNames: ["status"],
    registers,
    collect() {
      this.reset();
      // The two an operator watches are always there, at 0 when none is in them.
      const counts = new Map<string, number>([["active", 0], ["passivated", 0]]);
      for (const s of sources.souls()) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
      for (const [status, n] of counts) this.set({ status }, n);
    },
  });
  new Gauge({
    name: "ensoul_soul_queue_depth",
    help: "Perceptions waiting behind a soul's running turn.",
    labelNames: ["soul"],
    registers,
    collect() {
      this.reset();
      for (const s of sources.souls()) this.set({ soul: s.id }, s.pending);
    },
  });
  // Totals the node keeps anyway: read at scrape time rather than counted twice.
  const fromCounters = (name: string, help: string, key: keyof ReturnType<MetricsSources["counters"]>) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(sources.counters()[key]);
      },
    });
  fromCounters("ensoul_perceptions_total", "Perceptions from the bus taken into a soul's inbox.", "perceptions");
  fromCounters("ensoul_perceptions_deduplicated_total", "Perceptions dropped as duplicates (a platform retry, a redelivery, a replay, an Idempotency-Key sent again), by a soul's inbox or a bridge.", "duplicates");
  fromCounters("ensoul_whispers_total", "Whispers delivered to souls.", "whispers");

  return {
    registry,
    text: () => registry.metrics(),
    contentType: registry.contentType,
    turn(soul, process, durationMs) {
      turns.inc({ soul, process });
      turnSeconds.observe({ soul, process }, durationMs / 1000);
    },
    turnFailed: (soul, phase) => failures.inc({ soul, phase }),
    providerCall(c) {
      const labels = { provider: c.provider, model: c.model };
      calls.inc(labels);
      callSeconds.observe(labels, c.durationMs / 1000);
      if (c.failure !== undefined) callFailures.inc({ ...labels, kind: c.failure });
      if (c.inputTokens) tokens.inc({ ...labels, direction: "input" }, c.inputTokens);
      if (c.outputTokens) tokens.inc({ ...labels, direction: "output" }, c.outputTokens);
    },
    gateDecision: (soul, gate, decision, phase) => decisions.inc({ soul, gate, decision, phase }),
    deadLetter: (category) => dead.inc({ reason: category }),
    budgetRefused: (soul, work) => refusals.inc({ soul, work }),
  };
}
