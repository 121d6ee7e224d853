/**
 * What the chaos scenarios share: a fleet of echo souls in `ensoul up` children
 * (echoFleet.config.ts), a steady publisher of perceptions, and a ledger of the answers as a
 * bridge sees them (the says subjects through a durable consumer, so after JetStream's msgId
 * deduplication), which says what was answered once, twice or never.
 */
import { join } from "node:path";
import { clusterSubjects, decodeEnvelope, isKind, type Bus, type Envelope } from "../../../runtime/bus/index.ts";
import { requestControl, type SoulMemoryReply } from "../../../runtime/node/index.ts";
import { spawnNode, type NodeProcess } from "../cluster/cliProcess.ts";
import { perceive } from "../cluster/clusterKit.ts";

export const fleetConfig = join(import.meta.dirname, "echoFleet.config.ts");

export const fleetSoulId = (i: number) => `s${String(i).padStart(3, "0")}`;

export interface FleetNodeOptions {
  cluster: string;
  souls: number;
  node: string;
  nodes?: string[];
  nats: string | string[];
  data: string;
  replicas?: number;
  /** More environment for the child (e.g. ENSOUL_FAULTS, a fault plan for runtime/faults). */
  env?: Record<string, string>;
}

/** `ensoul up echoFleet.config.ts --node <node>` with the fleet's shape in its environment. */
export function spawnFleetNode(o: FleetNodeOptions): NodeProcess {
  const nats = Array.isArray(o.nats) ? o.nats.join(",") : o.nats;
  return spawnNode([fleetConfig, "--node", o.node, "--nats", nats, "--data", o.data], {
    CHAOS_CLUSTER: o.cluster,
    CHAOS_SOULS: String(o.souls),
    CHAOS_NODES: (o.nodes ?? [o.node]).join(","),
    CHAOS_REPLICAS: String(o.replicas ?? 1),
    ...o.env,
  });
}

/** Seeded draws, so a failing run can be replayed with its seed (CHAOS_SEED). */
export { seededRandom as seeded } from "../seededRandom.ts";

export interface Sent {
  id: string;
  soul: string;
  content: string;
  at: number;
}

export interface Answer {
  id: string;
  causation: string;
  from: string;
  text: string;
  at: number;
}

/**
 * The answers as a bridge sees them: every final speech on the says subjects, through a
 * durable consumer. A message delivered again (same id) is a redelivery, not a second answer;
 * a second final with another id for the same perception is a duplicate: the soul answered twice.
 */
export class AnswerLedger {
  /** Final answers by causation (perception id), each distinct id once. */
  readonly byCausation = new Map<string, Answer[]>();
  readonly arrivals: number[] = [];
  redeliveries = 0;
  private readonly ids = new Set<string>();

  static async watch(bus: Bus, consumer: string): Promise<AnswerLedger> {
    const ledger = new AnswerLedger();
    await bus.durable(clusterSubjects(bus.cluster).allSouls("says"), consumer, (m) => ledger.take(m.data));
    return ledger;
  }

  take(bytes: Uint8Array): void {
    const d = decodeEnvelope(bytes);
    if (!d.ok || !isKind(d.envelope, "speech") || !d.envelope.body.final) return;
    const e = d.envelope as Envelope<"speech">;
    if (this.ids.has(e.id)) {
      this.redeliveries++;
      return;
    }
    this.ids.add(e.id);
    const at = Date.now();
    this.arrivals.push(at);
    const list = this.byCausation.get(e.causation ?? "") ?? [];
    list.push({ id: e.id, causation: e.causation ?? "", from: e.from, text: e.body.text, at });
    this.byCausation.set(e.causation ?? "", list);
  }

  get answers(): number {
    return this.ids.size;
  }

  answered(id: string): boolean {
    return this.byCausation.has(id);
  }

  /** The first answer that arrived after `t`, or undefined. */
  firstAfter(t: number): number | undefined {
    return this.arrivals.find((a) => a > t);
  }

  /** What is wrong with the answers to `sent`: missing, duplicated, wrong soul or text, strays. */
  audit(sent: readonly Sent[]): { missing: Sent[]; duplicates: Answer[][]; wrong: Answer[]; strays: Answer[] } {
    const sentIds = new Set(sent.map((s) => s.id));
    const missing: Sent[] = [];
    const duplicates: Answer[][] = [];
    const wrong: Answer[] = [];
    for (const s of sent) {
      const answers = this.byCausation.get(s.id);
      if (!answers) {
        missing.push(s);
        continue;
      }
      if (answers.length > 1) duplicates.push(answers);
      for (const a of answers) if (a.from !== s.soul || a.text !== `echo: ${s.content}`) wrong.push(a);
    }
    const strays = [...this.byCausation.entries()].filter(([c]) => !sentIds.has(c)).flatMap(([, a]) => a);
    return { missing, duplicates, wrong, strays };
  }
}

export interface SteadyOptions {
  bus: Bus;
  /** How many to send; Infinity: until stop(). */
  total: number;
  ratePerSecond: number;
  soulCount: number;
  /** Which soul gets perception i (default: a seeded random one). */
  random: () => number;
  ledger: AnswerLedger;
}

/**
 * Publishes `total` perceptions at a steady rate, open loop: the i-th is due at start + i/rate,
 * whatever the answers do, so several are in flight at each moment and a fault finds work
 * in every stage. Publishes are sequential (each waits for the stream's ack), so each soul's
 * perceptions are stored in the order sent; one that waits out an outage is followed at once by
 * those that fell due meanwhile.
 */
export class SteadyPublisher {
  readonly sent: Sent[] = [];
  /** Perceptions published but not yet answered, sampled at each publish. */
  readonly inFlight: number[] = [];
  startedAt = 0;
  done: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly o: SteadyOptions) {}

  start(): this {
    this.startedAt = Date.now();
    this.done = this.run();
    return this;
  }

  stop(): void {
    this.stopped = true;
  }

  /** True once the last perception is sent (or the publisher was stopped). */
  finished = false;

  /**
   * One more perception, now, to soul `soul`: for a check that needs work in flight after the
   * steady run is over (a recovery to time). Only once the publisher has finished, so each
   * soul's perceptions stay sequential, in the order sent.
   */
  async probe(soul = fleetSoulId(0)): Promise<Sent> {
    if (!this.finished) throw new Error("probe() is for after the steady run");
    const content = `probe ${this.sent.length} for ${soul}`;
    const env = await perceive(this.o.bus, soul, content, { name: "chaos" });
    const sent = { id: env.id, soul, content, at: Date.now() };
    this.sent.push(sent);
    return sent;
  }

  private async run(): Promise<void> {
    const interval = 1000 / this.o.ratePerSecond;
    for (let i = 0; i < this.o.total && !this.stopped; i++) {
      const due = this.startedAt + i * interval;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const soul = fleetSoulId(Math.floor(this.o.random() * this.o.soulCount));
      const content = `perception ${i} for ${soul}`;
      const env = await perceive(this.o.bus, soul, content, { name: "chaos" });
      this.sent.push({ id: env.id, soul, content, at: Date.now() });
      this.inFlight.push(this.sent.length - this.o.ledger.byCausation.size);
    }
    this.finished = true;
  }
}

/** Each soul's memory from its node, with what a test checks: turns, inbox, the perceptions its working memory holds. */
export async function soulMemory(bus: Bus, node: string, soul: string): Promise<SoulMemoryReply & { perceived: string[] }> {
  const reply = await requestControl<SoulMemoryReply>(bus, node, "memory", { soulId: soul }, 15_000);
  const memories = (reply.workingMemory as { memories?: { role: string; content?: unknown; metadata?: { perceptionId?: string } }[] }).memories ?? [];
  return { ...reply, perceived: memories.filter((m) => m.role === "user").map((m) => m.metadata?.perceptionId ?? "?") };
}

/** Per soul, the ids sent to it, in order. */
export function bySoul(sent: readonly Sent[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const s of sent) out.set(s.soul, [...(out.get(s.soul) ?? []), s.id]);
  return out;
}
