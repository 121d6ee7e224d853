/**
 * Subject builders for one cluster's namespace. Every name that goes into a subject is
 * checked against one token rule, `[A-Za-z0-9_-]{1,128}`, so an id taken from the outside
 * world (a Slack user, a soul name in a config file) can never add a token, a wildcard or
 * whitespace to a subject: no subject injection. The rule is deliberately narrower than
 * NATS's own (which allows almost any printable byte) so that subjects also make safe
 * JetStream names, file names and log keys.
 */
import { InvalidNameError } from "./errors.ts";

export const SUBJECT_ROOT = "ensoul";
export const NAME_MAX_LENGTH = 128;
const NAME_PATTERN = /^[A-Za-z0-9_-]+$/;

/**
 * `internal` carries the perceptions only the node hosting a soul may make: in the soul's own
 * voice (`internal`) or routed to a process (`process`). Its own subject, so that who may send
 * them is a NATS permission (the node role's), not a field any publisher can set.
 */
export const SOUL_VERBS = ["perceive", "whisper", "says", "events", "internal"] as const;
export type SoulVerb = (typeof SOUL_VERBS)[number];

/** Checks one name and returns it; throws InvalidNameError naming the field and the value. */
export function assertName(field: string, value: unknown): string {
  if (typeof value !== "string") throw new InvalidNameError(field, value, `must be a string, got ${typeof value}`);
  if (value.length === 0) throw new InvalidNameError(field, value, "must not be empty");
  if (value.length > NAME_MAX_LENGTH) throw new InvalidNameError(field, value, `must be at most ${NAME_MAX_LENGTH} characters, got ${value.length}`);
  if (!NAME_PATTERN.test(value)) {
    const bad = [...value].find((ch) => !NAME_PATTERN.test(ch)) ?? "";
    throw new InvalidNameError(field, value, `may contain only A-Z a-z 0-9 _ - (found ${JSON.stringify(bad)})`);
  }
  return value;
}

export function isValidName(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= NAME_MAX_LENGTH && NAME_PATTERN.test(value);
}

function assertSoulVerb(verb: unknown): SoulVerb {
  if (typeof verb === "string" && (SOUL_VERBS as readonly string[]).includes(verb)) return verb as SoulVerb;
  throw new InvalidNameError("soul verb", verb, `must be one of ${SOUL_VERBS.join(", ")}`);
}

/** The JetStream stream that holds a cluster's durable traffic. */
export function streamName(cluster: string): string {
  return `ENSOUL_${assertName("cluster", cluster)}`;
}

/** Subjects the cluster stream captures: perceptions in (from outside and from nodes) and speech out must survive downtime. */
export function streamSubjects(cluster: string): string[] {
  const c = assertName("cluster", cluster);
  return [`${SUBJECT_ROOT}.${c}.soul.*.perceive`, `${SUBJECT_ROOT}.${c}.soul.*.says`, `${SUBJECT_ROOT}.${c}.soul.*.internal`];
}

export interface ClusterSubjects {
  readonly cluster: string;
  soul(soulId: string, verb: SoulVerb): string;
  perceive(soulId: string): string;
  /** Node-only perceptions: internal or routed (`SOUL_VERBS`). */
  internal(soulId: string): string;
  whisper(soulId: string): string;
  says(soulId: string): string;
  events(soulId: string): string;
  /** Every soul's subjects for one verb (`ensoul.<c>.soul.*.<verb>`), for nodes and debuggers. */
  allSouls(verb: SoulVerb): string;
  gateVerify(skill: string): string;
  /** A tool actor's request/reply subject (queue group `tool-<name>`). */
  toolCall(tool: string): string;
  node(nodeId: string, verb: string): string;
  /** All control subjects of one node (`ensoul.<c>.node.<id>.>`). */
  nodeControl(nodeId: string): string;
  readonly dead: string;
  readonly streamName: string;
  readonly streamSubjects: readonly string[];
}

/** Builders bound to one cluster; the cluster name is checked once here. */
export function clusterSubjects(cluster: string): ClusterSubjects {
  const c = assertName("cluster", cluster);
  const base = `${SUBJECT_ROOT}.${c}`;
  const soul = (soulId: string, verb: SoulVerb): string => `${base}.soul.${assertName("soulId", soulId)}.${assertSoulVerb(verb)}`;
  return {
    cluster: c,
    soul,
    perceive: (soulId) => soul(soulId, "perceive"),
    internal: (soulId) => soul(soulId, "internal"),
    whisper: (soulId) => soul(soulId, "whisper"),
    says: (soulId) => soul(soulId, "says"),
    events: (soulId) => soul(soulId, "events"),
    allSouls: (verb) => `${base}.soul.*.${assertSoulVerb(verb)}`,
    gateVerify: (skill) => `${base}.gate.${assertName("skill", skill)}.verify`,
    toolCall: (tool) => `${base}.tool.${assertName("tool", tool)}.call`,
    node: (nodeId, verb) => `${base}.node.${assertName("nodeId", nodeId)}.${assertName("node verb", verb)}`,
    nodeControl: (nodeId) => `${base}.node.${assertName("nodeId", nodeId)}.>`,
    dead: `${base}.dead`,
    streamName: streamName(c),
    streamSubjects: streamSubjects(c),
  };
}

/**
 * The soul a message names by its subject, for a receiver subscribed to
 * `ensoul.<cluster>.soul.*.<verb>`: the subscription fixes every token but the soul's, and NATS
 * lets any client publish with anything there (`b@d`, `é`, even a literal `*` or `>`). A
 * token that is not a name (section 2 of PROTOCOL.md) names no soul; `reason` says why, for
 * the dead letter.
 */
export function soulOfSubject(subject: string): { id: string } | { reason: string } {
  const token = subject.split(".")[3];
  try {
    return { id: assertName("soulId", token) };
  } catch (err) {
    return { reason: `no soul: ${err instanceof Error ? err.message : String(err)}` };
  }
}

export type ParsedSubject =
  | { cluster: string; kind: "soul"; id: string; verb: SoulVerb }
  | { cluster: string; kind: "gate"; id: string; verb: "verify" }
  | { cluster: string; kind: "node"; id: string; verb: string }
  | { cluster: string; kind: "dead"; id: null; verb: null };

/**
 * Reads a concrete ensoul subject back into its parts. Returns null for anything that is
 * not exactly one of the shapes above (other namespaces, wildcards, bad tokens), because a
 * receiver routes on the result and must not guess.
 */
export function parseSubject(subject: string): ParsedSubject | null {
  if (typeof subject !== "string") return null;
  const t = subject.split(".");
  if (t[0] !== SUBJECT_ROOT || t.length < 3 || !t.slice(1).every(isValidName)) return null;
  const cluster = t[1];
  if (t.length === 3 && t[2] === "dead") return { cluster, kind: "dead", id: null, verb: null };
  if (t.length !== 5) return null;
  const [, , kind, id, verb] = t;
  if (kind === "soul" && (SOUL_VERBS as readonly string[]).includes(verb)) return { cluster, kind, id, verb: verb as SoulVerb };
  if (kind === "gate" && verb === "verify") return { cluster, kind, id, verb };
  if (kind === "node") return { cluster, kind, id, verb };
  return null;
}
