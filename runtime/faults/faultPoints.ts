/**
 * The I/O boundaries of the exactly-once paths, by name. Each is one place in the code where an
 * operation can fail before it lands, land with its acknowledgement lost, be slow, or be raced;
 * tests inject exactly those faults there (docs/GUARANTEES.md lists what each one proves).
 */
export const FAULT_POINTS = [
  /** A perception written to a soul's inbox (store.receive). */
  "perception.intake",
  /** A perception acknowledged to the stream that delivered it, after its turn committed. */
  "perception.ack",
  /** A turn's one local transaction (LMDB commitTurn). */
  "turn.commit",
  /** A committed outbox entry (speech, an event) published on the bus. */
  "outbox.publish",
  /** A record appended to a soul's replicated history (turn, snapshot, acked). */
  "history.append",
  /** A new owner's claim record appended to a soul's history. */
  "history.claim",
  /** A compaction's removal of the records before a snapshot. */
  "history.purge",
  /** A node's or a soul's lease renewed or taken (compare-and-set). */
  "lease.renew",
  /** A bridge's post or edit of a reply on its platform. */
  "bridge.post",
  /** A bridge's own durable record (ledger) of a message taken or a reply posted. */
  "bridge.record",
  /** A tool run for a soul (local or remote). */
  "tool.call",
  /** A tool call's durable record (started or done) in the soul's tool ledger. */
  "tool.record",
  /** The HTTP bridge's publish of a perception for a request. */
  "http.publish",
] as const;

export type FaultPoint = (typeof FAULT_POINTS)[number];

export function isFaultPoint(value: unknown): value is FaultPoint {
  return typeof value === "string" && (FAULT_POINTS as readonly string[]).includes(value);
}

/**
 * What happens at a point:
 * - `fail`: the operation is not run; the caller gets an InjectedFault (it never landed).
 * - `ackLost`: the operation runs and lands; the caller then gets an InjectedFault (its acknowledgement was lost).
 * - `delay`: the operation runs `ms` later (slow).
 * - `hold`: the operation waits until the test releases it (`before` it runs, or `after` it landed and before its caller hears): a race made certain.
 * - `crash`: the process is killed with SIGKILL, before the operation runs or, with `after`, once it landed.
 */
export type FaultKind = "fail" | "ackLost" | "delay" | "hold" | "crash";

export interface Fault {
  kind: FaultKind;
  /** `delay`: how long. */
  ms?: number;
  /** `hold` and `crash`: after the operation landed rather than before it runs. */
  after?: boolean;
}

/** What the code says of one occurrence of a point (soul id, message id, record kind...), for matching and reports. */
export type FaultDetail = Readonly<Record<string, string | number | boolean | undefined>>;

/** The error an injected `fail` or `ackLost` throws, so a log line shows the fault was injected. */
export class InjectedFault extends Error {
  constructor(
    readonly point: FaultPoint,
    readonly kind: "fail" | "ackLost",
  ) {
    super(kind === "fail" ? `injected fault at ${point}: failed before it landed` : `injected fault at ${point}: landed, acknowledgement lost`);
    this.name = "InjectedFault";
  }
}
