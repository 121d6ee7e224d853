import { Command, CommanderError } from "commander";
import { redactSecrets } from "../log/index.ts";
import { quietOnBrokenPipe } from "./brokenPipe.ts";
// The store's default path is the node's DEFAULT_DATA_DIR; its own folder loads no LMDB (`--help` stays fast).
import { DEFAULT_PATH as DEFAULT_DATA_DIR } from "../store/defaults/index.ts";
import { CliError } from "./CliError.ts";
import { registerNatsConfigCommand } from "./natsConfigCommandLine.ts";
import { registerSoulCommand } from "./soulCommandLine.ts";
import { clusterFrom, natsOptionsFrom, requireNats, withNatsOptions, type NatsFlags } from "./natsOptions.ts";
import { warn } from "./warning.ts";

/**
 * The `ensoul` command. Each subcommand lives in its own file; this one only wires them to
 * commander and turns failures into one clear line. Commands are imported when they run: the
 * model providers' SDKs alone take most of a second to load, and `ensoul status` needs none.
 */
const program = new Command()
  .name("ensoul")
  .description("An actor runtime for AI souls")
  .showHelpAfterError()
  .exitOverride()
  .option("--log-level <level>", "how much the runtime logs on stderr: fatal, error, warn, info (default), debug (every turn), trace, silent (env ENSOUL_LOG_LEVEL)")
  .configureHelp({ showGlobalOptions: true })
  // Before any command runs: the log is configured once, from the flag or the environment.
  .hook("preAction", async (root) => {
    const flag = root.opts<{ logLevel?: string }>().logLevel;
    const fromEnv = process.env.ENSOUL_LOG_LEVEL?.trim() || undefined;
    if (flag === undefined && fromEnv === undefined) return;
    const { configureLogging, parseLogLevel, LogLevelError } = await import("../log/index.ts");
    try {
      configureLogging({ level: parseLogLevel(flag ?? fromEnv!, flag !== undefined ? "--log-level" : "ENSOUL_LOG_LEVEL") });
    } catch (err) {
      throw err instanceof LogLevelError ? new CliError(err.message) : err;
    }
  });

const positiveInt = (flag: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`${flag} must be a positive whole number of milliseconds, got '${value}'`);
  return n;
};

withNatsOptions(
  program
    .command("up")
    .description("start a cluster (or, with --nats and --node, one node of it) from a config file, and show its live status until Ctrl-C")
    .argument("[config]", "cluster config, YAML or TypeScript (default: ensoul.yaml or ensoul.config.ts here)")
    .option("-n, --node <name>", "which node of the config this process is (env ENSOUL_NODE); needed with --nats when the config names several")
    .option("-d, --data <dir>", "data directory, instead of the config's (each node keeps LMDB in <dir>/<node>)")
    .option("--status <mode>", "live status: auto (refreshing on a terminal, a line per change otherwise), lines, or off", "auto")
    .option("--inspect [port|ws-url]", "stream the machines of the node's souls, daimons and skill gates to the Stately inspector (a relay started on port, default 8080, or one running at ws-url)")
    .option("--console", "read `@soul text` lines from stdin and print the answers, also when stdin is not a terminal (on a terminal it is on)")
    .option("--metrics <[host:]port>", "serve Prometheus metrics at http://<host>:<port>/metrics (host 127.0.0.1 unless given; port 0: any free port)")
    .option("--debug [port]", "serve the debugger page and its API for the whole cluster on http://127.0.0.1:<port>/ (default 4500; token: env ENSOUL_DEBUG_TOKEN)"),
  { cluster: true },
).action(async (config: string | undefined, opts: NatsFlags & { node?: string; data?: string; status: string; inspect?: string | boolean; console?: boolean; metrics?: string; debug?: string | boolean }) => {
  if (!["auto", "lines", "off"].includes(opts.status)) throw new CliError(`--status must be auto, lines or off, got '${opts.status}'`);
  const { upCommand } = await import("./upCommand.ts");
  await upCommand(config, opts);
});

program
  .command("demo")
  .description("the demo cluster in one process (what `npm start` runs): Claudius, Kothar whispering, the built-in gates; chat in this terminal (piped stdin: one answer per line, then exit)")
  .option("-d, --data <dir>", "data directory (LMDB in <dir>/local), shared with `ensoul chat` and `ensoul memory`", DEFAULT_DATA_DIR)
  .option("-u, --user <name>", "your name, as Claudius perceives it", process.env.USER || "user")
  .option("-c, --config <file>", "another cluster config with a soul 'claudius' (default: examples/demo.yaml)")
  .option("--timeout <ms>", "how long to wait for each answer", positiveInt("--timeout"), 120_000)
  .option("--inspect [port|ws-url]", "stream Claudius's and Kothar's machines to the Stately inspector (a relay started on port, default 8080, or one running at ws-url)")
  .option("--debug [port]", "serve the debugger page and its API on http://127.0.0.1:<port>/ (default 4500; token: env ENSOUL_DEBUG_TOKEN)")
  .action(async (opts: { data: string; user: string; config?: string; timeout: number; inspect?: string | boolean; debug?: string | boolean }) => {
    const { demoCommand } = await import("./demoCommand.ts");
    await demoCommand({
      data: opts.data,
      user: opts.user,
      timeoutMs: opts.timeout,
      ...(opts.config !== undefined ? { config: opts.config } : {}),
      ...(opts.inspect !== undefined ? { inspect: opts.inspect } : {}),
      ...(opts.debug !== undefined ? { debug: opts.debug } : {}),
    });
  });

withNatsOptions(
  program
    .command("chat")
    .description("talk with a soul in this terminal (piped stdin: one answer per line, then exit); with --nats, a soul of a running cluster")
    .argument("[soul]", "which soul (default: samantha)")
    .option("-m, --model <provider:model>", "the model for every step, e.g. groq:llama-3.1-8b-instant (local mode)")
    .option("-d, --data <dir>", "data directory (local mode; LMDB in <dir>/local, shared with `ensoul demo`)", DEFAULT_DATA_DIR)
    .option("--as <name>", "your name, as the soul perceives it (default: your login name)")
    .option("-u, --user <name>", "deprecated: your name, as --as (the NATS user is --nats-user)")
    .option("--inspect [port|ws-url]", "stream the soul's machines to the Stately inspector (local mode)")
    .option("--timeout <ms>", "with --nats: how long to wait for each answer", positiveInt("--timeout"), 120_000)
    .option("--queue", "with --nats: if the soul's node is down, leave your lines in the cluster's stream and wait for the answers until it is back"),
  { personUser: true },
).action(async (soul: string | undefined, opts: NatsFlags & { model?: string; data: string; as?: string; inspect?: string | boolean; timeout: number; queue?: boolean }) => {
  // --user used to be the person here, and the NATS user everywhere else: it still is the person, for now.
  if (opts.user !== undefined) warn("`ensoul chat --user` is deprecated: it names you to the soul, use --as <name> (the NATS user is --nats-user or ENSOUL_NATS_USER)");
  const name = opts.as ?? opts.user ?? (process.env.USER || "user");
  const nats = natsOptionsFrom(opts, process.env, { personUser: true });
  if (!nats) {
    const { chatCommand } = await import("./chatCommand.ts");
    await chatCommand({ soul, model: opts.model, data: opts.data, user: name, ...(opts.inspect !== undefined ? { inspect: opts.inspect } : {}) });
    return;
  }
  if (opts.model !== undefined) throw new CliError("--model chooses the model of a local soul; with --nats the cluster's config chooses it");
  const { natsChat } = await import("./natsChat.ts");
  await natsChat({ soul: soul ?? "samantha", nats, cluster: clusterFrom(opts), user: name, turnTimeoutMs: opts.timeout, queue: opts.queue === true });
});

withNatsOptions(
  program
    .command("whisper")
    .description("whisper to a soul of a running cluster (sanitised; the soul keeps it for its next turn)")
    .argument("<soul>", "the soul")
    .argument("<text>", "the whisper")
    .option("--source <name>", "who whispers, as the soul will recall it", "operator"),
).action(async (soul: string, text: string, opts: NatsFlags & { source: string }) => {
  const { whisperCommand } = await import("./whisperCommand.ts");
  await whisperCommand({ nats: requireNats(opts, "whisper"), cluster: clusterFrom(opts), soul, text, source: opts.source });
});

program
  .command("dev")
  .description("run a soul (ensoul chat) or a cluster config (ensoul up) and run it again when its code changes, memory kept; code that does not load is shown and the last good version keeps running")
  .argument("[target]", "a soul's path (./souls/ada) or a cluster config (default: ensoul.yaml or ensoul.config.ts here)")
  .option("-d, --data <dir>", "data directory, as for chat and up")
  .action(async (target: string | undefined, opts: { data?: string }) => {
    const [{ devCommand }, { findConfigFile }] = await Promise.all([import("./devCommand.ts"), import("../node/index.ts")]);
    await devCommand(target ?? findConfigFile(undefined), opts.data !== undefined ? { data: opts.data } : {});
  });

program
  .command("dev-check", { hidden: true })
  .option("--soul <path>")
  .option("--config <file>")
  .action(async (opts: { soul?: string; config?: string }) => {
    const { devCheckCommand } = await import("./devCommand.ts");
    await devCheckCommand(opts);
  });

program
  .command("init")
  .description("write a new soul project into <dir>: a soul (persona, mental processes, an ISM phase), ensoul.yaml, a test on the offline model")
  .argument("<dir>", "the new project's folder (new or empty)")
  .option("--ensoul <spec>", "what package.json depends on for ensoul: a version range, a tarball or a folder (default: the version running this)")
  .option("--name <name>", "the soul's display name (default: from the folder's name)")
  .action(async (dir: string, opts: { ensoul?: string; name?: string }) => {
    const { initCommand } = await import("./initCommand.ts");
    initCommand(dir, { ...(opts.ensoul !== undefined ? { ensoul: opts.ensoul } : {}), ...(opts.name !== undefined ? { name: opts.name } : {}) });
  });

withNatsOptions(
  program
    .command("status")
    .description("the nodes of a running cluster (found by their heartbeats) and their souls")
    .option("--wait <ms>", "the longest to listen for heartbeats (it stops once every node has beaten twice)", positiveInt("--wait"), 2_500)
    .option("--json", "print the nodes' status as JSON"),
).action(async (opts: NatsFlags & { wait: number; json?: boolean }) => {
  const { statusCommand } = await import("./statusCommand.ts");
  await statusCommand({ nats: requireNats(opts, "status"), cluster: clusterFrom(opts), waitMs: opts.wait, json: opts.json === true });
});

withNatsOptions(
  program
    .command("memory")
    .description("a soul's current process, working memory and soul memory: live over --nats, or from LMDB in --data")
    .argument("<soul>", "the soul")
    .option("-d, --data <dir>", "data directory to read LMDB from when no --nats is given (or <dir>/<node> as `ensoul up` writes it)", DEFAULT_DATA_DIR)
    .option("-n, --node <name>", "read only <data>/<node>: needed when several nodes there hold a soul of that id")
    .option("--user <id>", "show the soul's model of this user: every version with its time and change note, and the latest markdown (from LMDB in --data)")
    .option("--export <dir>", "write the soul's user models as markdown (<user>.md and <user>.history.md) into <dir> (from LMDB in --data)")
    .option("--json", "print it as JSON"),
  { personUser: true },
).action(async (soul: string, opts: NatsFlags & { data: string; node?: string; json?: boolean; user?: string; export?: string }) => {
  // --user is the person whose user model to show; the NATS user is --nats-user.
  const nats = natsOptionsFrom(opts, process.env, { personUser: true });
  if (opts.user !== undefined || opts.export !== undefined) {
    const { userModelsCommand } = await import("./memoryCommand.ts");
    await userModelsCommand({
      soul,
      cluster: clusterFrom(opts),
      data: opts.data,
      json: opts.json === true,
      ...(opts.node !== undefined ? { node: opts.node } : {}),
      ...(opts.user !== undefined ? { user: opts.user } : {}),
      ...(opts.export !== undefined ? { exportDir: opts.export } : {}),
      ...(nats ? { nats } : {}),
    });
    return;
  }
  if (nats && opts.node !== undefined) throw new CliError("--node chooses a node's LMDB in --data; with --nats the live soul answers from its own node (leave out one of them)");
  const { memoryCommand } = await import("./memoryCommand.ts");
  await memoryCommand({ soul, cluster: clusterFrom(opts), data: opts.data, json: opts.json === true, ...(opts.node !== undefined ? { node: opts.node } : {}), ...(nats ? { nats } : {}) });
});

withNatsOptions(
  program
    .command("daimon")
    .description("switch a soul's daimon mode at run time: whisper, speak, both or off")
    .argument("<soul>", "the soul")
    .argument("<mode>", "whisper | speak | both | off")
    .option("--name <daimon>", "which daimon, when the soul has several (default: all of them)"),
).action(async (soul: string, mode: string, opts: NatsFlags & { name?: string }) => {
  const { daimonCommand } = await import("./daimonCommand.ts");
  await daimonCommand({ nats: requireNats(opts, "daimon"), cluster: clusterFrom(opts), soul, mode, ...(opts.name ? { name: opts.name } : {}) });
});

withNatsOptions(
  program
    .command("stop")
    .description("ask a node of a running cluster to drain and exit")
    .argument("<node>", "the node"),
).action(async (node: string, opts: NatsFlags) => {
  const { stopCommand } = await import("./stopCommand.ts");
  await stopCommand({ nats: requireNats(opts, "stop"), cluster: clusterFrom(opts), node });
});

program
  .command("export")
  .description("write a machine as JSON for Stately's tools (createMachine config): a soul's mental processes and their hand-overs, its ISM as a child; or a daimon's, or a bridge's")
  .argument("<what>", "a soul (samantha, claudius, or a path: ./souls/ada), a daimon (kothar, or daimon for the machine as such), or bridge")
  .option("-o, --out <file>", "write the JSON to this file (default: stdout)")
  .action(async (what: string, opts: { out?: string }) => {
    const { exportCommand } = await import("./exportCommand.ts");
    await exportCommand({ what, ...(opts.out !== undefined ? { out: opts.out } : {}) });
  });

registerNatsConfigCommand(program);
registerSoulCommand(program);

quietOnBrokenPipe();
try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    process.exitCode = e.exitCode;
  } else {
    // One line, no stack: the messages are written to stand alone; below it, the detail an error
    // carries for a person to act on (a syntax error's source line). Credentials redacted whatever
    // either quotes (a NATS URL with a password, a key).
    const detail = (e as { detail?: unknown }).detail;
    process.stderr.write(`ensoul: ${redactSecrets((e as Error).message.split("\n")[0])}\n${typeof detail === "string" && detail ? `${redactSecrets(detail)}\n` : ""}`);
    process.exitCode = e instanceof CliError ? e.exitCode : 1;
  }
}
