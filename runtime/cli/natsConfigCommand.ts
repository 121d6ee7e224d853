import { randomBytes } from "node:crypto";
import { chmodSync, writeFileSync } from "node:fs";
import { BusError } from "../bus/index.ts";
import { assertRole, natsServerConfig, passwordEnvVar, type NatsServerConfigOptions, type NatsUserSpec } from "../bus/permissions/index.ts";
import { CliError } from "./CliError.ts";

/**
 * `ensoul nats-config`: prints a nats-server config that gives each user the permissions of
 * its role (docs/SECURITY.md).
 *
 * Passwords: a user with `nkey=U...` has none. Otherwise, when `ENSOUL_NATS_PASSWORD_<USER>`
 * is set, the config refers to that variable (`password: $ENSOUL_NATS_PASSWORD_<USER>`), so
 * nats-server reads it from its own environment and ensoul never prints it. When it is not
 * set, a password is generated: it is written into the config and shown once on stderr,
 * because whoever runs the command has to hand it to the process that connects.
 */
export interface NatsConfigCommandOptions {
  /** One or more clusters (`--cluster`, repeatable). */
  cluster: string | readonly string[];
  /** `name:role=<role>[:cluster=c][:souls=a,b][:skills=x,y][:tools=t,u][:node=id][:consumers=a,b][:shared=read|write][:speak][:nkey=U...]` */
  user: readonly string[];
  storeDir?: string;
  port?: string | number;
  host?: string;
  /** Everyone on `_INBOX.>` (for clients that cannot set an inbox prefix). */
  sharedInbox?: boolean;
  isolation?: string;
  /** Write the config here (mode 0600) instead of stdout. */
  out?: string;
  env?: NodeJS.ProcessEnv;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  generatePassword?: () => string;
}

export interface NatsConfigUserSummary {
  user: string;
  role: string;
  credential: "nkey" | "env" | "generated";
  /** For `env` and `generated`: the variable the password is (or should be) kept in. */
  envVar?: string;
}

export interface NatsConfigResult {
  config: string;
  users: NatsConfigUserSummary[];
}

const LIST_KEYS = new Set(["souls", "skills", "tools", "consumers"]);
const VALUE_KEYS = new Set(["role", "cluster", "node", "nkey", "shared", ...LIST_KEYS]);
/**
 * nats-server parses a variable's value as a config value: digits become a number, `true`
 * a boolean, `#` starts a comment. A letter first and base64url after keeps it a plain string.
 */
const ENV_PASSWORD = /^[A-Za-z][A-Za-z0-9_-]{11,255}$/;

/** 24 random bytes, base64url, starting with a letter (so it also works as an env value). */
export function generatePassword(): string {
  for (;;) {
    const p = randomBytes(24).toString("base64url");
    if (/^[A-Za-z]/.test(p)) return p;
  }
}

/** Parses one `--user` value into a user spec without its credential. */
export function parseUserSpec(spec: string): Omit<NatsUserSpec, "password" | "nkey"> & { nkey?: string } {
  const [name, ...parts] = spec.split(":");
  if (!name) throw new CliError(`--user ${JSON.stringify(spec)}: expected name:role=<node|bridge|daimon|gate|chat>[:souls=a,b]...`);
  const fields = new Map<string, string>();
  let speak = false;
  for (const part of parts) {
    if (part === "speak") {
      speak = true;
      continue;
    }
    const eq = part.indexOf("=");
    const key = eq < 0 ? part : part.slice(0, eq);
    if (eq < 0 || !VALUE_KEYS.has(key)) {
      throw new CliError(`--user ${name}: unknown or incomplete field ${JSON.stringify(part)} (fields: role=, cluster=, souls=, skills=, tools=, node=, consumers=, shared=, nkey=, speak)`);
    }
    if (fields.has(key)) throw new CliError(`--user ${name}: ${key} given twice`);
    fields.set(key, part.slice(eq + 1));
  }
  const role = fields.get("role");
  if (role === undefined) throw new CliError(`--user ${name}: needs role=<node|bridge|daimon|gate|chat>`);
  const checkedRole = (() => {
    try {
      return assertRole(role);
    } catch (e) {
      throw new CliError(`--user ${name}: ${(e as Error).message}`);
    }
  })();
  const list = (key: string) => {
    const v = fields.get(key);
    return v === undefined ? undefined : v.split(",").filter((x) => x !== "");
  };
  const out: ReturnType<typeof parseUserSpec> = { user: name, role: checkedRole };
  const cluster = fields.get("cluster");
  if (cluster !== undefined) out.cluster = cluster;
  const souls = list("souls");
  if (souls !== undefined) out.souls = souls;
  const skills = list("skills");
  if (skills !== undefined) out.skills = skills;
  const tools = list("tools");
  if (tools !== undefined) out.tools = tools;
  const consumers = list("consumers");
  if (consumers !== undefined) out.consumers = consumers;
  const node = fields.get("node");
  if (node !== undefined) out.nodeId = node;
  const nkey = fields.get("nkey");
  if (nkey !== undefined) out.nkey = nkey;
  if (speak) out.speak = true;
  const shared = fields.get("shared");
  if (shared !== undefined) {
    if (shared !== "read" && shared !== "write") throw new CliError(`--user ${name}: shared= takes read or write (the cluster's shared-context bucket), got ${JSON.stringify(shared)}`);
    out.sharedContext = shared;
  }
  return out;
}

function parsePort(port: string | number | undefined): number | undefined {
  if (port === undefined) return undefined;
  const n = typeof port === "number" ? port : /^\d+$/.test(port) ? Number(port) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new CliError(`--port must be an integer from 1 to 65535, got ${JSON.stringify(String(port))}`);
  return n;
}

export async function natsConfigCommand(options: NatsConfigCommandOptions): Promise<NatsConfigResult> {
  const env = options.env ?? process.env;
  const stdout = options.stdout ?? ((t: string) => void process.stdout.write(t));
  const stderr = options.stderr ?? ((t: string) => void process.stderr.write(t));
  const generate = options.generatePassword ?? generatePassword;
  const clusters = typeof options.cluster === "string" ? [options.cluster] : [...options.cluster];
  if (clusters.length === 0) throw new CliError("nats-config needs --cluster <name>");
  if (options.user.length === 0) throw new CliError("nats-config needs at least one --user name:role=<node|bridge|daimon|gate|chat>");
  if (options.isolation !== undefined && options.isolation !== "accounts" && options.isolation !== "single-account") {
    throw new CliError(`--isolation must be accounts or single-account, got ${JSON.stringify(options.isolation)}`);
  }

  const summaries: NatsConfigUserSummary[] = [];
  const generated: { user: string; password: string; envVar: string }[] = [];
  const users: NatsUserSpec[] = options.user.map((raw) => {
    const spec = parseUserSpec(raw);
    if (spec.nkey !== undefined) {
      summaries.push({ user: spec.user, role: spec.role, credential: "nkey" });
      return spec as NatsUserSpec;
    }
    let envVar: string;
    try {
      envVar = passwordEnvVar(spec.user);
    } catch (e) {
      throw new CliError(`--user: ${(e as Error).message}`);
    }
    const fromEnv = env[envVar];
    if (fromEnv !== undefined && fromEnv !== "") {
      // Checked, never shown: a bad value would be misread by nats-server (see ENV_PASSWORD).
      if (!ENV_PASSWORD.test(fromEnv)) {
        throw new CliError(`${envVar} is set but unusable: it must be 12-256 characters of A-Z a-z 0-9 _ -, starting with a letter (its value is not shown)`);
      }
      summaries.push({ user: spec.user, role: spec.role, credential: "env", envVar });
      return { ...spec, password: { env: envVar } };
    }
    const password = generate();
    generated.push({ user: spec.user, password, envVar });
    summaries.push({ user: spec.user, role: spec.role, credential: "generated", envVar });
    return { ...spec, password };
  });

  const configOptions: NatsServerConfigOptions = { clusters, users, inbox: options.sharedInbox ? "shared" : "per-user" };
  const port = parsePort(options.port);
  if (port !== undefined) configOptions.port = port;
  if (options.host !== undefined) configOptions.host = options.host;
  if (options.storeDir !== undefined) configOptions.jetstream = { storeDir: options.storeDir };
  if (options.isolation !== undefined) configOptions.isolation = options.isolation as "accounts" | "single-account";

  let config: string;
  try {
    config = natsServerConfig(configOptions);
  } catch (e) {
    if (e instanceof BusError) throw new CliError(e.message);
    throw e;
  }

  if (options.out !== undefined) {
    // An existing file keeps its mode on write: tighten it before the secrets go in.
    writeFileSync(options.out, "", { mode: 0o600 });
    chmodSync(options.out, 0o600);
    writeFileSync(options.out, config);
  }
  else stdout(config);

  const notes: string[] = [];
  for (const s of summaries) {
    if (s.credential === "env") notes.push(`${s.user}: password from $${s.envVar}; start nats-server with it set (ensoul does not print it)`);
    if (s.credential === "nkey") notes.push(`${s.user}: nkey user; the client signs with its seed, the config holds only the public key`);
  }
  for (const g of generated) {
    notes.push(`${g.user}: GENERATED password, shown only now (it is also in the config): ${g.password}`);
    notes.push(`  to keep it out of the config next time, set ${g.envVar} for nats-server and for the process connecting as ${g.user}`);
  }
  if (options.out !== undefined) notes.push(`config written to ${options.out} (mode 0600)`);
  if (!options.sharedInbox) notes.push("clients must connect with inboxPrefix _INBOX_<user> (or use --shared-inbox)");
  stderr(notes.map((n) => `# ensoul nats-config: ${n}\n`).join(""));
  return { config, users: summaries };
}
