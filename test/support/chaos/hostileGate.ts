/**
 * A hostile skill gate for the gate-faults chaos scenario: a raw nats.js responder on
 * `ensoul.<cluster>.gate.<skill>.verify` (queue group `<skill>`, as docs/PROTOCOL.md §6 says a
 * skill gate subscribes) that, seeded, answers each request in one of these ways:
 *
 * - `pass` / `refuse`: a genuine verdict for exactly this request (recorded);
 * - `hang`: never answers;
 * - `late`: a genuine pass for this request, sent after the requester's deadline (`lateMs`);
 * - `garbage`: bytes that are not an envelope;
 * - `otherRequest`: a well-formed pass whose causation is another request's id;
 * - `replay`: the exact bytes of a genuine pass sent earlier for another proposal;
 * - `wrongVersion`: a pass for this request in an envelope of version 2;
 * - `notVerdict`: a well-formed envelope for this request, but speech, not a verdict;
 * - `crash`: the connection dies with the request unanswered, and comes back a moment later;
 * - `unsubscribe`: the responder leaves the queue group (no responders), and rejoins later.
 *
 * It records what it genuinely passed (proposal id and phase, with the content it saw), so a
 * scenario can check that nothing else ever got through. Raw nats.js and msgpackr, not the
 * project's bus, because a hostile peer is not bound by the runtime's encoder.
 */
import { connect, type Msg, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { Packr, Unpackr } from "msgpackr";
import { decodeEnvelope, encodeEnvelope, makeEnvelope, type VerdictBody } from "../../../runtime/bus/index.ts";
import { pick, seededRandom } from "../seededRandom.ts";

export const HOSTILE_ANSWERS = ["hang", "late", "garbage", "otherRequest", "replay", "wrongVersion", "notVerdict", "crash", "unsubscribe"] as const;
export type HostileAnswer = (typeof HOSTILE_ANSWERS)[number];
export type GateAnswer = "pass" | "refuse" | HostileAnswer;

const PHASE_HEADER = "Ensoul-Gate-Phase";
const packr = new Packr({ useRecords: false, variableMapSize: true, encodeUndefinedAsNil: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number" });

export interface HostileGateOptions {
  url: string;
  cluster: string;
  skill: string;
  seed: number;
  /** Share of requests answered with a hostile answer; the rest pass, and `refuseRate` of all are refused. */
  hostileRate: number;
  refuseRate: number;
  /** How long a crashed or unsubscribed responder stays away. */
  awayMs: number;
  /** How late a `late` pass comes: past the requester's deadline. */
  lateMs: number;
}

export interface HostileGate {
  /** `${proposalId}|${phase}` → the contents genuinely passed under it. */
  readonly passed: Map<string, string[]>;
  /** `${proposalId}|${phase}` of passes sent too late: they must count for nothing. */
  readonly late: Set<string>;
  /** `${proposalId}|${phase}` of genuine refusals. */
  readonly refused: Set<string>;
  readonly answers: Readonly<Record<GateAnswer, number>>;
  readonly requests: number;
  /** While set, every request gets a genuine pass (the attack is over). */
  honest: boolean;
  close(): Promise<void>;
}

export async function startHostileGate(o: HostileGateOptions): Promise<HostileGate> {
  const subject = `ensoul.${o.cluster}.gate.${o.skill}.verify`;
  const random = seededRandom(o.seed);
  const answers = Object.fromEntries(["pass", "refuse", ...HOSTILE_ANSWERS].map((k) => [k, 0])) as Record<GateAnswer, number>;
  const passed = new Map<string, string[]>();
  const refused = new Set<string>();
  const late = new Set<string>();
  const passBytes: Uint8Array[] = [];
  const requestIds: string[] = [];
  let requests = 0;
  let nc: NatsConnection | undefined;
  let sub: Subscription | undefined;
  let closed = false;
  /** Crashed or unsubscribed, not back yet: a message still arriving on the old subscription is left unanswered. */
  let down = false;
  let away: ReturnType<typeof setTimeout> | undefined;
  const state: HostileGate = {
    passed,
    late,
    refused,
    answers,
    get requests() {
      return requests;
    },
    honest: false,
    async close() {
      closed = true;
      if (away) clearTimeout(away);
      await nc?.close().catch(() => undefined);
    },
  };

  const join = async (): Promise<void> => {
    nc ??= await connect({ servers: o.url, name: "hostile-gate", reconnect: false });
    // Closed while it was coming back: it stays away, and lets go of the connection it made.
    if (closed) return void (await nc.close().catch(() => undefined));
    sub = nc.subscribe(subject, { queue: o.skill, callback: (err, msg) => void (err ? undefined : answer(msg)) });
    await nc.flush();
    down = false;
  };
  const comeBackLater = () => {
    down = true;
    away = setTimeout(() => void (closed ? undefined : join().catch(() => comeBackLater())), o.awayMs);
  };

  const from = `gate.${o.skill}`;
  const verdict = (requestId: string, body: VerdictBody) => encodeEnvelope(makeEnvelope("verdict", from, "chain", body, { causation: requestId }));

  function answer(msg: Msg): void {
    requests++;
    const decoded = decodeEnvelope(msg.data);
    const request = decoded.ok && decoded.envelope.kind === "proposal" ? decoded.envelope : undefined;
    const proposal = (request?.body ?? {}) as { id?: string; content?: unknown };
    const key = `${String(proposal.id)}|${msg.headers?.get(PHASE_HEADER) ?? "?"}`;
    // Drawn for every request, honest or not, so the sequence does not shift with the mode.
    const r = random();
    const hostile = pick(random, HOSTILE_ANSWERS);
    if (!request || down) return; // not a proposal (nothing to verify), or a responder on its way out
    const kind: GateAnswer = state.honest ? "pass" : r < o.hostileRate ? hostile : r < o.hostileRate + o.refuseRate ? "refuse" : "pass";
    answers[kind]++;
    const previous = requestIds.at(-1);
    requestIds.push(request.id);
    switch (kind) {
      case "pass": {
        passed.set(key, [...(passed.get(key) ?? []), String(proposal.content)]);
        const bytes = verdict(request.id, { verdict: "pass" });
        passBytes.push(bytes);
        msg.respond(bytes);
        return;
      }
      case "refuse":
        refused.add(key);
        msg.respond(verdict(request.id, { verdict: "intercept", kind: "event", reason: "chaos: refused" }));
        return;
      case "hang":
        return;
      case "late": {
        late.add(key);
        const bytes = verdict(request.id, { verdict: "pass" });
        setTimeout(() => {
          try {
            if (!closed) msg.respond(bytes);
          } catch {
            // Its connection crashed meanwhile: the late pass is lost, as it would be.
          }
        }, o.lateMs);
        return;
      }
      case "garbage":
        msg.respond(Uint8Array.from({ length: 1 + Math.floor(random() * 40) }, () => Math.floor(random() * 256)));
        return;
      case "otherRequest":
        msg.respond(verdict(previous ?? "01NOSUCHREQUEST0000000000", { verdict: "pass" }));
        return;
      case "replay":
        msg.respond(passBytes.at(-1) ?? verdict("01NOSUCHREQUEST0000000000", { verdict: "pass" }));
        return;
      case "wrongVersion": {
        const env = unpackr.unpack(verdict(request.id, { verdict: "pass" })) as Record<string, unknown>;
        msg.respond(packr.pack({ ...env, v: 2 }));
        return;
      }
      case "notVerdict":
        msg.respond(encodeEnvelope(makeEnvelope("speech", from, "chain", { proposalId: String(proposal.id), text: "pass", final: true }, { causation: request.id })));
        return;
      case "crash": {
        const dying = nc;
        nc = undefined;
        sub = undefined;
        void dying?.close().catch(() => undefined);
        comeBackLater();
        return;
      }
      case "unsubscribe":
        sub?.unsubscribe();
        sub = undefined;
        comeBackLater();
        return;
    }
  }

  await join();
  return state;
}
