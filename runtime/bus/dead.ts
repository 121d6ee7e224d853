/**
 * Dead letters: a rejected message is reported on `ensoul.<cluster>.dead` with its reason,
 * so nothing bad is dropped silently, and the receiver goes on serving. The record keeps
 * only the first 256 bytes of the payload: enough to identify it, too little to turn the
 * dead subject into a second copy of a hostile or huge message.
 */
import { Packr, Unpackr } from "msgpackr";
import { componentLogger } from "../log/index.ts";
import type { Bus } from "./Bus.ts";
import { clusterSubjects } from "./subjects.ts";

export const DEAD_LETTER_HEAD_BYTES = 256;
export const DEAD_LETTER_VERSION = 1;
const MAX_REASON_CHARS = 1024;

export interface DeadLetter {
  v: typeof DEAD_LETTER_VERSION;
  /** The subject the rejected message arrived on. */
  subject: string;
  reason: string;
  /** Size of the rejected payload in bytes. */
  size: number;
  /** Its first 256 bytes, base64. */
  head: string;
  /** Epoch ms when it was rejected. */
  ts: number;
}

export interface DeadLetterInput {
  subject: string;
  reason: string;
  data: Uint8Array;
}

const packr = new Packr({ useRecords: false, variableMapSize: true, moreTypes: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number" });

export function makeDeadLetter(input: DeadLetterInput, now = Date.now()): DeadLetter {
  const data = input.data instanceof Uint8Array ? input.data : new Uint8Array();
  return {
    v: DEAD_LETTER_VERSION,
    subject: String(input.subject).slice(0, 1024),
    reason: String(input.reason).slice(0, MAX_REASON_CHARS),
    size: data.length,
    head: Buffer.from(data.subarray(0, DEAD_LETTER_HEAD_BYTES)).toString("base64"),
    ts: now,
  };
}

export function encodeDeadLetter(record: DeadLetter): Uint8Array {
  // ts as uint64, not the float64 msgpackr would pick for a number this large.
  return packr.pack({ ...record, ts: BigInt(Math.trunc(record.ts)) });
}

/** Reads a dead letter back (for debuggers and tests); null when the bytes are not one. */
export function decodeDeadLetter(bytes: Uint8Array): DeadLetter | null {
  let raw: unknown;
  try {
    raw = unpackr.unpack(bytes);
  } catch {
    return null;
  }
  if (typeof raw !== "object" || raw === null) return null;
  const r = raw as Record<string, unknown>;
  if (r.v !== DEAD_LETTER_VERSION) return null;
  if (typeof r.subject !== "string" || typeof r.reason !== "string" || typeof r.head !== "string") return null;
  if (typeof r.size !== "number" || typeof r.ts !== "number") return null;
  return { v: DEAD_LETTER_VERSION, subject: r.subject, reason: r.reason, size: r.size, head: r.head, ts: r.ts };
}

/** Told of each dead letter this process publishes, with the bus it went on (so a node counts only its own). */
export type DeadLetterObserver = (bus: Bus, letter: DeadLetter) => void;

const observers = new Set<DeadLetterObserver>();

/**
 * Watches the dead letters published from this process: they are written from many places (the
 * bus's receivers, the node's intake, skill gates), and counting them for metrics at each
 * would be easy to miss in the next one. Returns the function that stops watching.
 */
export function observeDeadLetters(observer: DeadLetterObserver): () => void {
  observers.add(observer);
  return () => void observers.delete(observer);
}

/**
 * Publishes a dead letter. Never throws: a receiver calls this from its message loop, and
 * failing to report a bad message must not stop it from serving good ones. Resolves to
 * whether the record was handed to the bus.
 */
export async function deadLetter(bus: Bus, cluster: string, input: DeadLetterInput): Promise<boolean> {
  try {
    const subject = clusterSubjects(cluster).dead;
    const record = makeDeadLetter(input);
    await bus.publish(subject, encodeDeadLetter(record));
    for (const observer of observers) {
      try {
        observer(bus, record);
      } catch {
        // An observer counts; its failure must not make a published dead letter look unpublished.
      }
    }
    return true;
  } catch (err) {
    componentLogger("bus").error(`could not dead-letter a message from ${input.subject} (${input.reason}): ${err instanceof Error ? err.message : String(err)}`);
    return false;
  }
}
