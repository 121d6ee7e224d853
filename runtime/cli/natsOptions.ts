/**
 * The NATS flags every cluster command shares, one naming on every command, with their
 * environment fallbacks:
 *
 *   --nats <url>            ENSOUL_NATS_URL              (comma-separated for several servers; nats://user:pass@host works)
 *   --nats-user <name>      ENSOUL_NATS_USER
 *   --nats-pass <password>  ENSOUL_NATS_PASS             (the flag warns: prefer the variable)
 *   --token <token>         ENSOUL_NATS_TOKEN            (the flag warns: prefer the variable)
 *   --creds <file>          ENSOUL_NATS_CREDS            (a NATS .creds file: user JWT and NKey seed)
 *   --nkey-seed-file <path> ENSOUL_NATS_NKEY_SEED_FILE
 *   --inbox-prefix <prefix> ENSOUL_NATS_INBOX_PREFIX     (per-user inboxes, docs/SECURITY.md 2.3)
 *   --cluster <name>        ENSOUL_CLUSTER               (default: "local", or the config's)
 *
 * `--user` and `--pass` were the user and password of most commands while `ensoul chat` and
 * `ensoul memory` said `--nats-user` (their `--user` is a person). They still work where
 * they did, hidden from `--help`, with one deprecation note naming the flags.
 *
 * A secret given as a flag (a password, a token, credentials in the URL) is visible to anyone
 * who can run `ps`, and stays in the shell's history: it still works, with a warning that names
 * the flag and never its value. Secrets are never printed.
 */
import { readFileSync } from "node:fs";
import { Option, type Command } from "commander";
import { redactSecrets } from "../log/index.ts";
import type { NatsConnectOptions } from "../node/index.ts";
import { CliError } from "./CliError.ts";
import { warn as warnOnStderr } from "./warning.ts";

export interface NatsFlags {
  nats?: string;
  natsUser?: string;
  natsPass?: string;
  /** Deprecated spellings of natsUser and natsPass (unless the command's --user is a person). */
  user?: string;
  pass?: string;
  token?: string;
  creds?: string;
  nkeySeedFile?: string;
  inboxPrefix?: string;
  cluster?: string;
}

export interface NatsFlagOptions {
  /**
   * The command's own --user names a person (`ensoul chat`, `ensoul memory`): it has no
   * deprecated NATS --user/--pass, and --user is never sent to NATS.
   */
  personUser?: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;
type Warn = (message: string) => void;

/** Adds the NATS flags (the file comment lists them). */
export function withNatsOptions(command: Command, opts: NatsFlagOptions & { cluster?: boolean } = {}): Command {
  command
    .option("--nats <url>", "NATS server URL of the running cluster (env ENSOUL_NATS_URL)")
    .option("--nats-user <name>", "NATS user (env ENSOUL_NATS_USER)")
    .option("--nats-pass <password>", "NATS password; prefer env ENSOUL_NATS_PASS (a flag shows in ps)");
  if (opts.personUser !== true) {
    command.addOption(new Option("--user <name>", "deprecated: --nats-user").hideHelp()).addOption(new Option("--pass <password>", "deprecated: --nats-pass").hideHelp());
  }
  command
    .option("--token <token>", "NATS token; prefer env ENSOUL_NATS_TOKEN (a flag shows in ps)")
    .option("--creds <file>", "NATS credentials file, user JWT and NKey seed (env ENSOUL_NATS_CREDS)")
    .option("--nkey-seed-file <path>", "file holding an NKey user seed (env ENSOUL_NATS_NKEY_SEED_FILE)")
    .option("--inbox-prefix <prefix>", "reply inbox prefix, for per-user inbox permissions (env ENSOUL_NATS_INBOX_PREFIX)");
  if (opts.cluster !== false) command.option("--cluster <name>", "cluster name (env ENSOUL_CLUSTER; default: local)");
  return command;
}

/** The warnings already given the deprecation note: once per process (per warning sink). */
const toldDeprecated = new WeakSet<Warn>();

/**
 * The user and password the flags give, and the flag that carried the password. The old
 * --user/--pass count only where they are NATS flags, after one note saying so.
 */
function flagCredentials(flags: NatsFlags, opts: NatsFlagOptions, warn: Warn): { user?: string; pass?: string; passFlag: string } {
  const legacy = opts.personUser === true ? {} : { user: flags.user, pass: flags.pass };
  const used = (["user", "pass"] as const).filter((k) => legacy[k] !== undefined).map((k) => `--${k}`);
  if (used.length > 0 && !toldDeprecated.has(warn)) {
    toldDeprecated.add(warn);
    const names = used.length === 2 ? "--user and --pass are deprecated names for the NATS user and password" : `${used[0]} is a deprecated name for the NATS ${used[0] === "--user" ? "user" : "password"}`;
    warn(`${names}: use --nats-user and --nats-pass (or ENSOUL_NATS_USER and ENSOUL_NATS_PASS)`);
  }
  for (const k of ["user", "pass"] as const) {
    const current = k === "user" ? flags.natsUser : flags.natsPass;
    if (legacy[k] !== undefined && current !== undefined && legacy[k] !== current) {
      throw new CliError(`--${k} is the deprecated name of --nats-${k}, and they disagree: give --nats-${k} only`);
    }
  }
  const pass = flags.natsPass ?? legacy.pass;
  const user = flags.natsUser ?? legacy.user;
  return { ...(user !== undefined ? { user } : {}), ...(pass !== undefined ? { pass } : {}), passFlag: flags.natsPass === undefined && legacy.pass !== undefined ? "--pass" : "--nats-pass" };
}

const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";

/** Warns about each secret the command line carries, by flag name only. */
function warnAboutSecretFlags(flags: NatsFlags, { pass, passFlag }: { pass?: string; passFlag: string }, warn: Warn): void {
  const exposed = "on the command line, visible to anyone who can run `ps` and kept in your shell history";
  if (present(pass)) warn(`${passFlag} puts the NATS password ${exposed}: set ENSOUL_NATS_PASS instead, or use --creds <file>`);
  if (present(flags.token)) warn(`--token puts the NATS token ${exposed}: set ENSOUL_NATS_TOKEN instead, or use --creds <file>`);
  if (present(flags.nats) && redactSecrets(flags.nats) !== flags.nats) {
    warn(`--nats puts the credentials in its URL ${exposed}: set ENSOUL_NATS_URL instead, or use --creds <file>`);
  }
}

interface UrlCredentials {
  servers: string[];
  user?: string;
  pass?: string;
  /** `nats://x@host`: a token, or the user when the password comes from elsewhere. */
  lone?: string;
}

/**
 * Credentials written into a URL (`nats://alice:s3cret@host`, or `nats://t0ken@host` for a
 * token), as other NATS clients read them. nats.js ignores them, so they are taken out: the
 * connection gets them as its user and password (or token), and the URLs have none left to show.
 */
function takeUrlCredentials(list: readonly string[]): UrlCredentials {
  const out: UrlCredentials = { servers: [] };
  let seen: string | undefined;
  for (const server of list) {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      out.servers.push(server); // host:port, as nats.js also takes it
      continue;
    }
    if (url.username === "" && url.password === "") {
      out.servers.push(server);
      continue;
    }
    let user: string;
    let pass: string;
    try {
      [user, pass] = [decodeURIComponent(url.username), decodeURIComponent(url.password)];
    } catch {
      throw new CliError("a NATS URL has malformed credentials (check its %-escapes; they are not shown)");
    }
    const key = `${user}\n${pass}`;
    if (seen !== undefined && seen !== key) throw new CliError("the NATS URLs carry different credentials: give one user for all of them (ENSOUL_NATS_USER and ENSOUL_NATS_PASS)");
    seen = key;
    if (url.password !== "") Object.assign(out, { user, pass });
    else out.lone = user;
    url.username = "";
    url.password = "";
    out.servers.push(url.toString());
  }
  return out;
}

function readSecretFile(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (err) {
    throw new CliError(`cannot read the ${what} ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/** The connection the flags and environment describe, or undefined when no URL is given. */
export function natsOptionsFrom(flags: NatsFlags, env: Env = process.env, opts: NatsFlagOptions & { warn?: Warn } = {}): NatsConnectOptions | undefined {
  const url = flags.nats ?? (present(env.ENSOUL_NATS_URL) ? env.ENSOUL_NATS_URL : undefined);
  if (!url) return undefined;
  const warn = opts.warn ?? warnOnStderr;
  const given = flagCredentials(flags, opts, warn);
  warnAboutSecretFlags(flags, given, warn);
  const fromUrl = takeUrlCredentials(url.split(",").map((s) => s.trim()).filter(Boolean));
  const servers = fromUrl.servers;
  const out: NatsConnectOptions = { servers: servers.length === 1 ? servers[0] : servers };
  const pass = given.pass ?? env.ENSOUL_NATS_PASS ?? fromUrl.pass;
  // A lone name in the URL is the user when a password is given elsewhere, else a token (as NATS reads it).
  const user = given.user ?? env.ENSOUL_NATS_USER ?? fromUrl.user ?? (present(pass) ? fromUrl.lone : undefined);
  const token = flags.token ?? env.ENSOUL_NATS_TOKEN ?? (present(pass) ? undefined : fromUrl.lone);
  const creds = flags.creds ?? env.ENSOUL_NATS_CREDS;
  const seedFile = flags.nkeySeedFile ?? env.ENSOUL_NATS_NKEY_SEED_FILE;
  const ways = [present(user) || present(pass), present(token), present(creds), present(seedFile)].filter(Boolean).length;
  if (ways > 1) throw new CliError("give one way to authenticate to NATS: --nats-user/--nats-pass, --token, --creds or --nkey-seed-file");
  if (present(user)) out.user = user;
  if (present(pass)) out.pass = pass;
  if (present(token)) out.token = token;
  const inboxPrefix = flags.inboxPrefix ?? env.ENSOUL_NATS_INBOX_PREFIX;
  if (present(inboxPrefix)) out.inboxPrefix = inboxPrefix;
  if (present(creds)) {
    const text = readSecretFile(creds, "NATS credentials file");
    if (!/-----BEGIN NATS USER JWT-----/.test(text) || !/-----BEGIN USER NKEY SEED-----/.test(text)) {
      throw new CliError(`${creds} is not a NATS credentials file (it should hold a NATS USER JWT and a USER NKEY SEED block)`);
    }
    out.creds = text;
  }
  if (present(seedFile)) {
    const seed = readSecretFile(seedFile, "NKey seed file");
    if (!seed.startsWith("SU")) throw new CliError(`${seedFile} does not hold an NKey user seed (it should start with SU)`);
    out.nkeySeed = seed;
  }
  return out;
}

/** A URL given, or a clear error for a command that only talks to a running cluster. */
export function requireNats(flags: NatsFlags, command: string, env: Env = process.env): NatsConnectOptions {
  const nats = natsOptionsFrom(flags, env);
  if (!nats) throw new CliError(`ensoul ${command} talks to a running cluster: give --nats <url> (or set ENSOUL_NATS_URL)`);
  return nats;
}

export function clusterFrom(flags: NatsFlags, env: Env = process.env, fallback = "local"): string {
  return flags.cluster ?? (present(env.ENSOUL_CLUSTER) ? env.ENSOUL_CLUSTER : fallback);
}

/** The server list for a banner, credentials redacted. */
export function serversOf(nats: NatsConnectOptions): string {
  return redactSecrets(Array.isArray(nats.servers) ? nats.servers.join(", ") : nats.servers);
}
