/**
 * A nats-server (2.9+) configuration file for ensoul clusters: one user per participant,
 * each with the permissions of its role (rolePermissions.ts).
 *
 * With one cluster the users go in `authorization { users = [...] }`. With several, each
 * cluster gets its own account (`accounts { ENSOUL_<cluster> { jetstream: enabled, users } }`):
 * subject permissions cannot look inside a JetStream API payload, so a node allowed to
 * update its own stream could otherwise add another cluster's subjects to it and read them.
 * Accounts share no subjects at all, so that cannot happen. docs/SECURITY.md has the detail.
 *
 * Every value written into the file is either a checked token, a checked nkey, or a quoted
 * string whose characters were checked to need no escaping: nothing from the outside can
 * add a line, a block or a `$variable` to the config.
 */
import { fromPublic } from "@nats-io/nkeys";
import { BusError, describeValue, InvalidNameError } from "../errors.ts";
import { assertName } from "../subjects.ts";
import {
  assertRole,
  inboxPrefixFor,
  rolePermissions,
  SHARED_INBOX_PREFIX,
  type RolePermissions,
  type Role,
  type SubjectPermission,
} from "./rolePermissions.ts";

/** A password the server reads from its environment when it starts (`password: $VAR`). */
export interface EnvPassword {
  env: string;
}

export interface NatsUserSpec {
  /** The user's name: a token. It is the login name of password users and names the inbox prefix. */
  user: string;
  role: Role;
  /** Which cluster the user belongs to; required when the config has several clusters. */
  cluster?: string;
  /** A literal password (written into the file) or an environment variable the server reads. */
  password?: string | EnvPassword;
  /** An NKey user's public key (`U...`); the file then holds no secret for this user at all. */
  nkey?: string;
  souls?: readonly string[];
  skills?: readonly string[];
  /** Nodes: the tools they serve as tool actors (rolePermissions `tools`). */
  tools?: readonly string[];
  nodeId?: string;
  consumers?: readonly string[];
  speak?: boolean;
  /** The shared-context bucket: `read` or `write` (rolePermissions `sharedContext`). */
  sharedContext?: "read" | "write";
}

export interface NatsServerConfigOptions {
  cluster?: string;
  clusters?: readonly string[];
  users: readonly NatsUserSpec[];
  jetstream?: { storeDir?: string };
  port?: number;
  host?: string;
  /**
   * `per-user` (default): each user may only subscribe to its own `_INBOX_<user>.>`, so nobody
   * can read another user's replies; clients must connect with that `inboxPrefix`.
   * `shared`: everyone subscribes to `_INBOX.>`, for clients that cannot set a prefix.
   */
  inbox?: "per-user" | "shared";
  /** Default: `accounts` with several clusters, `single-account` with one. */
  isolation?: "accounts" | "single-account";
}

/** The account a cluster's users live in when each cluster has its own. */
export function accountName(cluster: string): string {
  return `ENSOUL_${assertName("cluster", cluster)}`;
}

/** The environment variable the CLI reads a user's password from: `ENSOUL_NATS_PASSWORD_<USER>`. */
export function passwordEnvVar(user: string): string {
  return `ENSOUL_NATS_PASSWORD_${assertName("user", user).toUpperCase().replaceAll("-", "_")}`;
}

const ENV_VAR = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
// Visible ASCII minus the two characters a quoted config string would treat specially.
const SAFE_QUOTED = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const PASSWORD_MIN = 8;
const PASSWORD_MAX = 256;

function quote(value: string): string {
  return `"${value}"`;
}

function assertPassword(user: string, password: string): string {
  // Never echo a password, not even a bad one.
  if (typeof password !== "string" || password.length < PASSWORD_MIN || password.length > PASSWORD_MAX || !SAFE_QUOTED.test(password)) {
    throw new BusError(
      `password of user ${describeValue(user)} must be ${PASSWORD_MIN}-${PASSWORD_MAX} visible ASCII characters without spaces, quotes or backslashes`,
    );
  }
  return password;
}

function assertEnvVar(user: string, name: unknown): string {
  if (typeof name !== "string" || !ENV_VAR.test(name)) throw new InvalidNameError(`password env variable of user ${user}`, name, "must match [A-Za-z_][A-Za-z0-9_]*");
  return name;
}

function assertNkey(user: string, nkey: unknown): string {
  let ok = false;
  if (typeof nkey === "string" && nkey.startsWith("U")) {
    try {
      fromPublic(nkey);
      ok = true;
    } catch {
      // reported below
    }
  }
  if (!ok) throw new InvalidNameError(`nkey of user ${user}`, nkey, "must be an NKey user public key (U...), not a seed");
  return nkey as string;
}

function assertStoreDir(dir: unknown): string {
  if (typeof dir !== "string" || dir.length === 0 || /["\\\u0000-\u001F\u007F]/.test(dir)) {
    throw new InvalidNameError("jetstream.storeDir", dir, "must be a path without quotes, backslashes or control characters");
  }
  return dir;
}

function assertHost(host: unknown): string {
  if (typeof host !== "string" || !/^[A-Za-z0-9.:_-]{1,253}$/.test(host)) throw new InvalidNameError("host", host, "must be a host name or IP address");
  return host;
}

function assertPort(port: unknown): number {
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) throw new InvalidNameError("port", port, "must be an integer from 1 to 65535");
  return port;
}

function clusterList(opts: NatsServerConfigOptions): string[] {
  const given = [...(opts.cluster !== undefined ? [opts.cluster] : []), ...(opts.clusters ?? [])];
  if (given.length === 0) throw new BusError("natsServerConfig needs a cluster (or clusters)");
  return [...new Set(given.map((c) => assertName("cluster", c)))];
}

interface ResolvedUser {
  spec: NatsUserSpec;
  cluster: string;
  permissions: RolePermissions;
  credential: string[];
}

function resolveUsers(opts: NatsServerConfigOptions, clusters: readonly string[]): ResolvedUser[] {
  if (!Array.isArray(opts.users) || opts.users.length === 0) throw new BusError("natsServerConfig needs at least one user");
  const seenUsers = new Set<string>();
  const seenEnv = new Map<string, string>();
  const seenConsumers = new Map<string, string>();
  const inbox = opts.inbox ?? "per-user";
  if (inbox !== "per-user" && inbox !== "shared") throw new InvalidNameError("inbox", inbox, "must be per-user or shared");

  return opts.users.map((spec) => {
    const user = assertName("user", spec.user);
    if (seenUsers.has(user)) throw new BusError(`user ${describeValue(user)} is listed twice`);
    seenUsers.add(user);
    const role = assertRole(spec.role);
    const cluster = spec.cluster !== undefined ? assertName("cluster", spec.cluster) : clusters.length === 1 ? clusters[0] : undefined;
    if (cluster === undefined) throw new BusError(`user ${describeValue(user)} needs a cluster: the config has several (${clusters.join(", ")})`);
    if (!clusters.includes(cluster)) throw new BusError(`user ${describeValue(user)} belongs to cluster ${describeValue(cluster)}, which is not one of ${clusters.join(", ")}`);

    let credential: string[];
    if ((spec.password === undefined) === (spec.nkey === undefined)) throw new BusError(`user ${describeValue(user)} needs exactly one of password and nkey`);
    if (spec.nkey !== undefined) credential = [`nkey: ${quote(assertNkey(user, spec.nkey))}`];
    else if (typeof spec.password === "object" && spec.password !== null) {
      const env = assertEnvVar(user, spec.password.env);
      const other = seenEnv.get(env);
      if (other !== undefined) throw new BusError(`users ${describeValue(other)} and ${describeValue(user)} would share the password variable ${env}`);
      seenEnv.set(env, user);
      credential = [`user: ${quote(user)}`, `password: $${env}`];
    } else credential = [`user: ${quote(user)}`, `password: ${quote(assertPassword(user, spec.password as string))}`];

    const permissions = rolePermissions(cluster, role, {
      user,
      inboxPrefix: inbox === "shared" ? SHARED_INBOX_PREFIX : inboxPrefixFor(user),
      ...(spec.souls !== undefined ? { souls: spec.souls } : {}),
      ...(spec.skills !== undefined ? { skills: spec.skills } : {}),
      ...(spec.tools !== undefined ? { tools: spec.tools } : {}),
      ...(spec.nodeId !== undefined ? { nodeId: spec.nodeId } : {}),
      ...(spec.consumers !== undefined ? { consumers: spec.consumers } : {}),
      ...(spec.speak !== undefined ? { speak: spec.speak } : {}),
      ...(spec.sharedContext !== undefined ? { sharedContext: spec.sharedContext } : {}),
    });
    // Two bridges with one consumer name could pull (and ack) each other's messages.
    if (role === "bridge") {
      for (const consumer of spec.consumers ?? [user]) {
        const key = `${cluster}/${consumer}`;
        const other = seenConsumers.get(key);
        if (other !== undefined) throw new BusError(`users ${describeValue(other)} and ${describeValue(user)} would share the durable consumer ${describeValue(consumer)} in cluster ${cluster}`);
        seenConsumers.set(key, user);
      }
    }
    return { spec, cluster, permissions, credential };
  });
}

function list(items: readonly string[], indent: string): string {
  if (items.length === 0) return "[]";
  return `[\n${items.map((s) => `${indent}  ${quote(s)}`).join(",\n")}\n${indent}]`;
}

function subjectBlock(name: string, p: SubjectPermission, indent: string): string {
  const inner = `${indent}  `;
  const lines = [`${inner}allow: ${list(p.allow, inner)}`];
  if (p.deny && p.deny.length > 0) lines.push(`${inner}deny: ${list(p.deny, inner)}`);
  return `${indent}${name}: {\n${lines.join("\n")}\n${indent}}`;
}

function durationText(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function userBlock(u: ResolvedUser, indent: string): string {
  const i1 = `${indent}  `;
  const i2 = `${i1}  `;
  const { spec, permissions: p } = u;
  const scope = [
    spec.souls ? `souls ${spec.souls.join(", ")}` : null,
    spec.skills ? `skills ${spec.skills.join(", ")}` : null,
    spec.tools ? `tools ${spec.tools.join(", ")}` : null,
    spec.nodeId !== undefined ? `node ${spec.nodeId}` : null,
  ].filter((s): s is string => s !== null);
  const perms = [subjectBlock("publish", p.publish, i2), subjectBlock("subscribe", p.subscribe, i2)];
  if (p.allowResponses) perms.push(`${i2}allow_responses: { max: ${p.allowResponses.max}, expires: ${quote(durationText(p.allowResponses.expiresMs))} }`);
  return [
    `${indent}{`,
    `${i1}# ${spec.user}: ${spec.role} of cluster ${u.cluster}${scope.length ? ` (${scope.join("; ")})` : ""}`,
    ...u.credential.map((l) => `${i1}${l}`),
    `${i1}permissions: {`,
    ...perms,
    `${i1}}`,
    `${indent}}`,
  ].join("\n");
}

/** The config file text. Throws a BusError (or InvalidNameError) naming the bad field. */
export function natsServerConfig(opts: NatsServerConfigOptions): string {
  const clusters = clusterList(opts);
  const isolation = opts.isolation ?? (clusters.length > 1 ? "accounts" : "single-account");
  if (isolation !== "accounts" && isolation !== "single-account") throw new InvalidNameError("isolation", isolation, "must be accounts or single-account");
  const users = resolveUsers(opts, clusters);

  const out: string[] = [
    `# nats-server configuration for ensoul (cluster${clusters.length > 1 ? "s" : ""} ${clusters.join(", ")}), generated by \`ensoul nats-config\`.`,
    "# Roles and subjects: docs/SECURITY.md. Needs nats-server 2.9 or later.",
    `# Inboxes: ${(opts.inbox ?? "per-user") === "per-user" ? "per user (clients connect with inboxPrefix _INBOX_<user>)" : "shared _INBOX (any user can read any other user's replies)"}.`,
    "",
  ];
  if (opts.host !== undefined) out.push(`host: ${quote(assertHost(opts.host))}`);
  if (opts.port !== undefined) out.push(`port: ${assertPort(opts.port)}`);
  const storeDir = opts.jetstream?.storeDir;
  out.push(storeDir !== undefined ? `jetstream {\n  store_dir: ${quote(assertStoreDir(storeDir))}\n}` : "jetstream: enabled");
  out.push("");

  if (isolation === "single-account") {
    out.push("authorization {", "  users = [", users.map((u) => userBlock(u, "    ")).join("\n"), "  ]", "}");
  } else {
    out.push("accounts {");
    for (const cluster of clusters) {
      const members = users.filter((u) => u.cluster === cluster);
      out.push(`  ${accountName(cluster)}: {`, "    jetstream: enabled");
      if (members.length === 0) out.push("    users: []");
      else out.push("    users: [", members.map((u) => userBlock(u, "      ")).join("\n"), "    ]");
      out.push("  }");
    }
    out.push("}");
  }
  return `${out.join("\n")}\n`;
}
