/**
 * What each kind of participant may publish and subscribe to on NATS, derived from the wire
 * protocol (docs/PROTOCOL.md) and from how the NATS bus drives the client (natsBus.ts,
 * natsStream.ts). docs/SECURITY.md explains every line; the integration test
 * (test/integration/security/permissions.test.ts) proves them against a real nats-server.
 *
 * Every subject is built from names checked with the bus's token rule, so no cluster,
 * soul, skill, node, consumer or user name can add a token or a wildcard to a permission.
 */
import { InvalidNameError } from "../errors.ts";
import { sharedBucketName } from "../sharedKv.ts";
import { nodeLeaseBucket, soulLeaseBucket } from "../leases.ts";
import { historyStreamName } from "../soulHistoryLog.ts";
import { assertName, streamName, SUBJECT_ROOT } from "../subjects.ts";

export const ROLES = ["node", "bridge", "daimon", "gate", "chat"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

export function assertRole(value: unknown): Role {
  if (isRole(value)) return value;
  throw new InvalidNameError("role", value, `must be one of ${ROLES.join(", ")}`);
}

/** nats-server's allow/deny lists. A subscribe entry may carry a queue group: `"<subject> <queue>"`. */
export interface SubjectPermission {
  allow: string[];
  deny?: string[];
}

/**
 * nats-server's `allow_responses`: the user may publish to the reply subject of a request it
 * received, `max` times within `expiresMs`, without a publish permission on that subject.
 * This is how a gate or a node answers requesters whose inboxes it could never name.
 */
export interface ResponsePermission {
  max: number;
  expiresMs: number;
}

export interface RolePermissions {
  publish: SubjectPermission;
  subscribe: SubjectPermission;
  allowResponses?: ResponsePermission;
}

export interface RolePermissionOptions {
  /**
   * The NATS user these permissions are for. It names the user's private inbox prefix
   * (`_INBOX_<user>`) and, for a bridge, its default durable consumer.
   */
  user?: string;
  /** Bridges, chats and daimons: the souls they serve or watch (default: every soul of the cluster). */
  souls?: readonly string[];
  /**
   * Gates: the skills they verify (default: every skill). Nodes: the skill-gate actors the
   * node serves (`nodes[].skillGates` of the cluster config); default none.
   */
  skills?: readonly string[];
  /**
   * Nodes: the tools it serves as tool actors (PROTOCOL.md, "Tool actors"), each in its queue
   * group `tool-<name>` (default none: serving a tool is a grant of its own, like a skill).
   */
  tools?: readonly string[];
  /** Nodes: the node's id, which confines its control subscription (default: every node). */
  nodeId?: string;
  /**
   * Bridges: the durable consumers they may create and pull from (default: one named after
   * `user`; without a user, none). Never a wildcard: a bridge that could pull from any
   * consumer could take the node's perceptions off the stream.
   */
  consumers?: readonly string[];
  /** Daimons: may also speak (publish the soul's says and a perception), as modes speak/both do. */
  speak?: boolean;
  /**
   * Where replies come back (JetStream API answers, publish acks, pulled messages, request
   * replies). Default: `_INBOX_<user>` when `user` is set, else NATS's shared `_INBOX`. The
   * client must connect with the same `inboxPrefix`.
   */
  inboxPrefix?: string;
  /**
   * The cluster's shared-context bucket (docs/PROTOCOL.md, "Shared context"): `write` to read,
   * watch and write it (and create it), `read` to read and watch it. Default `write` for a
   * node (its souls' `useSharedContext`), none for the other roles.
   */
  sharedContext?: "read" | "write";
}

/** Replies a gate or node may send: one per request, within a minute (gate deadlines are seconds). */
export const DEFAULT_RESPONSE_PERMISSION: ResponsePermission = { max: 1, expiresMs: 60_000 };

/** NATS's default inbox prefix, shared by every client that does not set its own. */
export const SHARED_INBOX_PREFIX = "_INBOX";

/** The private inbox prefix of one user; connect with `{ inboxPrefix: inboxPrefixFor(user) }`. */
export function inboxPrefixFor(user: string): string {
  return assertName("inbox prefix", `${SHARED_INBOX_PREFIX}_${assertName("user", user)}`);
}

function names(field: string, values: readonly string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  if (!Array.isArray(values)) throw new InvalidNameError(field, values, "must be a list of names");
  if (values.length === 0) throw new InvalidNameError(field, "", "must not be an empty list (leave it out to mean all)");
  return [...new Set(values.map((v) => assertName(field, v)))];
}

/**
 * The JetStream API a client needs to use a durable consumer it may not define freely: the
 * filter is part of the create subject (nats-server 2.9's `CONSUMER.CREATE.<stream>.<name>.<filter>`),
 * so the permission pins both the consumer's name and what it may read.
 */
function consumerApi(stream: string, consumer: string, filters: readonly string[]): string[] {
  return [
    `$JS.API.CONSUMER.INFO.${stream}.${consumer}`,
    ...filters.map((f) => `$JS.API.CONSUMER.CREATE.${stream}.${consumer}.${f}`),
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`,
    `$JS.ACK.${stream}.${consumer}.>`,
  ];
}

/**
 * The JetStream API of one key-value bucket as @nats-io/kv uses it: the stream's info (and
 * creation, for a writer), direct and message gets, the ordered push consumers of watches and
 * key listings (their flow-control replies included), and for a writer the key subjects
 * themselves. Watches deliver to the user's inbox, which every role may read.
 */
function kvBucketGrants(bucket: string, access: "read" | "write"): string[] {
  const stream = `KV_${bucket}`;
  const read = [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}.>`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.*`,
    `$JS.API.CONSUMER.DELETE.${stream}.*`,
    `$JS.FC.${stream}.>`,
  ];
  return access === "read" ? read : [...read, `$JS.API.STREAM.CREATE.${stream}`, `$JS.API.STREAM.UPDATE.${stream}`, `$KV.${bucket}.>`];
}

/** The shared-context bucket `ensoul_<cluster>_shared` (docs/PROTOCOL.md, "Shared context"). */
export function sharedContextGrants(cluster: string, access: "read" | "write"): string[] {
  if (access !== "read" && access !== "write") throw new InvalidNameError("sharedContext", access, "must be read or write");
  return kvBucketGrants(sharedBucketName(cluster), access);
}

/**
 * What failover needs (docs/STORAGE.md, "Failover and placement"): the souls' history stream
 * (append, and compact: a snapshot with a per-subject rollup, which is a publish on that soul's
 * subject; read with short-lived consumers; create it, and update it to its replicas and to
 * allow rollups), the lease buckets, and reading a soul's perceptions back from the cluster
 * stream when it moves. Never the stream's purge or delete API: one purge request can remove
 * every soul's history. Every node gets them: which nodes run with failover is the cluster
 * config's business, not the server's. docs/SECURITY.md says what a node can still destroy.
 */
export function failoverGrants(cluster: string): string[] {
  const history = historyStreamName(cluster);
  const stream = streamName(cluster);
  return [
    `${SUBJECT_ROOT}.${cluster}.history.*`,
    `$JS.API.STREAM.INFO.${history}`,
    `$JS.API.STREAM.CREATE.${history}`,
    `$JS.API.STREAM.UPDATE.${history}`,
    `$JS.API.CONSUMER.CREATE.${history}`,
    `$JS.API.CONSUMER.CREATE.${history}.>`,
    `$JS.API.CONSUMER.INFO.${history}.*`,
    `$JS.API.CONSUMER.DELETE.${history}.*`,
    `$JS.API.CONSUMER.MSG.NEXT.${history}.*`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    ...kvBucketGrants(nodeLeaseBucket(cluster), "write"),
    ...kvBucketGrants(soulLeaseBucket(cluster), "write"),
  ];
}

/**
 * The publish and subscribe permissions of one role in one cluster. Everything is inside
 * `ensoul.<cluster>.`, the cluster's JetStream API (`ENSOUL_<cluster>`) and the user's inbox.
 */
export function rolePermissions(cluster: string, role: Role, opts: RolePermissionOptions = {}): RolePermissions {
  const permissions = basePermissions(cluster, role, opts);
  // A node's souls use their shared contexts (useSharedContext): nodes write them unless told otherwise.
  const access = opts.sharedContext ?? (role === "node" ? "write" : undefined);
  if (access === undefined) return permissions;
  return { ...permissions, publish: { ...permissions.publish, allow: [...permissions.publish.allow, ...sharedContextGrants(cluster, access)] } };
}

function basePermissions(cluster: string, role: Role, opts: RolePermissionOptions): RolePermissions {
  const c = assertName("cluster", cluster);
  assertRole(role);
  const user = opts.user === undefined ? undefined : assertName("user", opts.user);
  const base = `${SUBJECT_ROOT}.${c}`;
  const stream = streamName(c);
  const inbox = opts.inboxPrefix !== undefined ? assertName("inboxPrefix", opts.inboxPrefix) : user !== undefined ? inboxPrefixFor(user) : SHARED_INBOX_PREFIX;
  const inboxes = `${inbox}.>`;
  const souls = names("soulId", opts.souls) ?? ["*"];
  const soul = (verb: string) => souls.map((s) => `${base}.soul.${s}.${verb}`);
  // Every client of the NATS bus asks for the account's JetStream info (jetstreamManager)
  // and for the stream's info (ensureStream) when it connects.
  const jsConnect = ["$JS.API.INFO", `$JS.API.STREAM.INFO.${stream}`];

  switch (role) {
    case "bridge": {
      const consumers = names("consumerName", opts.consumers) ?? (user !== undefined ? [user] : []);
      return {
        publish: {
          allow: [...soul("perceive"), `${base}.dead`, ...jsConnect, ...consumers.flatMap((n) => consumerApi(stream, n, soul("says")))],
        },
        subscribe: { allow: [...soul("says"), inboxes] },
      };
    }
    case "chat": {
      // A person at a terminal (`ensoul chat --nats`): finds the soul's node by its heartbeats,
      // and follows the soul's events to know when a turn is over and why a reply was blocked.
      // No consumers and no dead letters: it reads live, and dead-letters nothing it receives.
      return {
        publish: { allow: [...soul("perceive"), ...jsConnect] },
        subscribe: { allow: [...soul("says"), ...soul("events"), `${base}.node.*.heartbeat`, inboxes] },
      };
    }
    case "daimon": {
      const speaks = opts.speak === true;
      return {
        publish: { allow: [...soul("whisper"), ...(speaks ? [...soul("says"), ...soul("perceive")] : []), ...jsConnect] },
        subscribe: { allow: [...soul("perceive"), ...soul("says"), inboxes] },
      };
    }
    case "gate": {
      const skills = names("skill", opts.skills);
      // The queue group is part of the permission: a gate can only join its skill's group, so
      // it shares the requests with the other instances instead of overhearing all of them.
      const serve = skills ? skills.map((k) => `${base}.gate.${k}.verify ${k}`) : [`${base}.gate.*.verify *`];
      return {
        publish: { allow: [`${base}.dead`, ...jsConnect] },
        subscribe: { allow: [...serve, inboxes] },
        allowResponses: { ...DEFAULT_RESPONSE_PERMISSION },
      };
    }
    case "node": {
      const nodeId = opts.nodeId === undefined ? "*" : assertName("nodeId", opts.nodeId);
      // A node that serves skill gates joins each skill's queue group, like a gate does, and
      // only for the skills named: a node is trusted with its cluster's traffic, but serving
      // a skill is a grant of its own (a node refuses to start a skill gate it cannot serve).
      const serve = [
        ...(names("skill", opts.skills) ?? []).map((k) => `${base}.gate.${k}.verify ${k}`),
        ...(names("tool", opts.tools) ?? []).map((t) => `${base}.tool.${t}.call tool-${t}`),
      ];
      const soulVerbs = ["perceive", "whisper", "says", "events"].map((v) => `${base}.soul.*.${v}`);
      return {
        publish: {
          allow: [
            ...soulVerbs,
            // Perceptions in a soul's own voice or routed to a process: nodes alone may make
            // them, so this is the only role that may publish here (the intake refuses those
            // fields on perceive). Nodes pull them with a consumer, so no subscription.
            `${base}.soul.*.internal`,
            `${base}.gate.*.verify`,
            // Its souls' tool calls, to whichever tool actor serves them.
            `${base}.tool.*.call`,
            `${base}.node.*.*`,
            `${base}.dead`,
            ...jsConnect,
            `$JS.API.STREAM.CREATE.${stream}`,
            `$JS.API.STREAM.UPDATE.${stream}`,
            `$JS.API.CONSUMER.CREATE.${stream}.>`,
            `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.*`,
            `$JS.API.CONSUMER.INFO.${stream}.*`,
            `$JS.API.CONSUMER.DELETE.${stream}.*`,
            `$JS.API.CONSUMER.NAMES.${stream}`,
            `$JS.API.CONSUMER.MSG.NEXT.${stream}.*`,
            `$JS.ACK.${stream}.>`,
            ...failoverGrants(c),
          ],
        },
        subscribe: { allow: [...soulVerbs, `${base}.node.${nodeId}.>`, `${base}.dead`, ...serve, inboxes] },
        allowResponses: { ...DEFAULT_RESPONSE_PERMISSION },
      };
    }
  }
}
