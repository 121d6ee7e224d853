/**
 * The NATS flags every cluster command shares, with their environment fallbacks:
 *
 *   --nats <url>            ENSOUL_NATS_URL              (comma-separated for several servers)
 *   --user <name>           ENSOUL_NATS_USER             (`ensoul chat` spells it --nats-user: --user is the chat name)
 *   --pass <password>       ENSOUL_NATS_PASS
 *   --token <token>         ENSOUL_NATS_TOKEN
 *   --nkey-seed-file <path> ENSOUL_NATS_NKEY_SEED_FILE
 *   --inbox-prefix <prefix> ENSOUL_NATS_INBOX_PREFIX     (per-user inboxes, docs/SECURITY.md 2.3)
 *   --cluster <name>        ENSOUL_CLUSTER               (default: "local", or the config's)
 *
 * Secrets come from flags, the environment or a file, and are never printed.
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import type { NatsConnectOptions } from "../node/natsConnection.ts";
import { CliError } from "./CliError.ts";

export interface NatsFlags {
  nats?: string;
  user?: string;
  pass?: string;
  natsUser?: string;
  natsPass?: string;
  token?: string;
  nkeySeedFile?: string;
  inboxPrefix?: string;
  cluster?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Adds the NATS flags; `userFlags: false` leaves out --user/--pass (for `ensoul chat`, which has its own --user). */
export function withNatsOptions(command: Command, opts: { userFlags?: boolean; cluster?: boolean } = {}): Command {
  command.option("--nats <url>", "NATS server URL of the running cluster (env ENSOUL_NATS_URL)");
  if (opts.userFlags === false) {
    command.option("--nats-user <name>", "NATS user (env ENSOUL_NATS_USER)").option("--nats-pass <password>", "NATS password (env ENSOUL_NATS_PASS)");
  } else {
    command.option("--user <name>", "NATS user (env ENSOUL_NATS_USER)").option("--pass <password>", "NATS password (env ENSOUL_NATS_PASS)");
  }
  command
    .option("--token <token>", "NATS token (env ENSOUL_NATS_TOKEN)")
    .option("--nkey-seed-file <path>", "file holding an NKey user seed (env ENSOUL_NATS_NKEY_SEED_FILE)")
    .option("--inbox-prefix <prefix>", "reply inbox prefix, for per-user inbox permissions (env ENSOUL_NATS_INBOX_PREFIX)");
  if (opts.cluster !== false) command.option("--cluster <name>", "cluster name (env ENSOUL_CLUSTER; default: local)");
  return command;
}

const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";

/** The connection the flags and environment describe, or undefined when no URL is given. */
export function natsOptionsFrom(flags: NatsFlags, env: Env = process.env): NatsConnectOptions | undefined {
  const url = flags.nats ?? (present(env.ENSOUL_NATS_URL) ? env.ENSOUL_NATS_URL : undefined);
  if (!url) return undefined;
  const servers = url.split(",").map((s) => s.trim()).filter(Boolean);
  const out: NatsConnectOptions = { servers: servers.length === 1 ? servers[0] : servers };
  const user = flags.user ?? flags.natsUser ?? env.ENSOUL_NATS_USER;
  const pass = flags.pass ?? flags.natsPass ?? env.ENSOUL_NATS_PASS;
  const token = flags.token ?? env.ENSOUL_NATS_TOKEN;
  const seedFile = flags.nkeySeedFile ?? env.ENSOUL_NATS_NKEY_SEED_FILE;
  const ways = [present(user) || present(pass), present(token), present(seedFile)].filter(Boolean).length;
  if (ways > 1) throw new CliError("give one way to authenticate to NATS: --user/--pass, --token, or --nkey-seed-file");
  if (present(user)) out.user = user;
  if (present(pass)) out.pass = pass;
  if (present(token)) out.token = token;
  const inboxPrefix = flags.inboxPrefix ?? env.ENSOUL_NATS_INBOX_PREFIX;
  if (present(inboxPrefix)) out.inboxPrefix = inboxPrefix;
  if (present(seedFile)) {
    let seed: string;
    try {
      seed = readFileSync(seedFile, "utf8").trim();
    } catch (err) {
      throw new CliError(`cannot read the NKey seed file ${seedFile} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
    }
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

/** The server list for a banner, without any credentials embedded in a URL. */
export function serversOf(nats: NatsConnectOptions): string {
  const list = Array.isArray(nats.servers) ? nats.servers : [nats.servers];
  return list.map((s) => s.replace(/\/\/[^@/]*@/, "//")).join(", ");
}
