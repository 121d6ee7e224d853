/**
 * `ensoul up [config]`: starts a node of the cluster the config describes and shows its
 * live status until Ctrl-C (SIGINT or SIGTERM), then finishes the running turns, drains and
 * shuts down with every committed turn persisted (a second Ctrl-C forces, shutdown.ts).
 * Without --nats the whole cluster runs in this process on the in-process bus; with --nats,
 * each `ensoul up --node <name>` hosts the souls the config
 * assigns to that node. With --inspect, every machine the node runs is streamed to the
 * Stately inspector; the inspection stops after the node, so its last snapshots still go out.
 * With --debug, the debugger page (docs/DEBUGGER.md) watches the cluster; it too stops after
 * the node, so the page sees the souls stop.
 */
import { resolve } from "node:path";
import type { Inspection } from "../inspect/index.ts";
import { ConfigError, findConfigFile, loadClusterConfig, ModelConfigError, NatsUnreachableError, nodeDataDir, startNode, type EnsoulNode } from "../node/index.ts";
import { rootLogger } from "../log/index.ts";
import { CliError } from "./CliError.ts";
import { debuggerLine, debugPort, openDebugger } from "./debugFlag.ts";
import { inspectTarget, openInspection } from "./inspectFlag.ts";
import { natsOptionsFrom, serversOf, type NatsFlags } from "./natsOptions.ts";
import { guardProcess } from "./processGuard.ts";
import { watchShutdown } from "./shutdown.ts";
import { startStatusDisplay } from "./statusDisplay.ts";

export interface UpCommandOptions extends NatsFlags {
  node?: string;
  data?: string;
  /** `auto` (a terminal redraws, anything else gets lines), `lines`, or `off`. */
  status?: string;
  /** `--inspect [port|ws-url]`: true for the bare flag (the local relay on 8080). */
  inspect?: string | boolean;
  /** `--metrics [host:]port`: serve Prometheus metrics at `/metrics` (on 127.0.0.1 without a host). */
  metrics?: string;
  /** `--debug [port]`: true for the bare flag (port 4500). */
  debug?: string | boolean;
  env?: NodeJS.ProcessEnv;
  out?: NodeJS.WriteStream;
  /** Read `@soul text` lines from stdin and print the answers (default: when stdin is a terminal). */
  console?: boolean;
}

export async function upCommand(configArg: string | undefined, options: UpCommandOptions): Promise<void> {
  const env = options.env ?? process.env;
  const out = options.out ?? process.stdout;
  const target = inspectTarget(options.inspect);
  const debugAt = debugPort(options.debug);
  let file: string;
  try {
    file = findConfigFile(configArg);
  } catch (err) {
    if (err instanceof ConfigError) throw CliError.of(err);
    throw err;
  }
  const loaded = await loadClusterConfig(file).catch((err: unknown) => {
    throw err instanceof ConfigError ? CliError.of(err) : err;
  });
  if (options.cluster !== undefined && options.cluster !== loaded.config.cluster) {
    throw new CliError(`--cluster ${options.cluster} does not match the config's cluster '${loaded.config.cluster}'`);
  }
  const nats = natsOptionsFrom(options, env);
  const nodeId = options.node ?? (env.ENSOUL_NODE?.trim() || undefined);
  const metrics = options.metrics !== undefined ? await metricsFlag(options.metrics) : undefined;

  const inspection: Inspection | undefined = target ? await openInspection(target) : undefined;
  // From here a failure nothing caught restarts the actor it belongs to, or ends the process with its context logged.
  const unguard = guardProcess();
  let node: EnsoulNode;
  try {
    node = await startNode({
      config: loaded,
      ...(nodeId !== undefined ? { nodeId } : {}),
      ...(nats ? { nats } : {}),
      ...(options.data !== undefined ? { data: resolve(options.data) } : {}),
      env,
      ...(metrics ? { metrics: true } : {}),
      ...(inspection ? { inspect: inspection.inspect } : {}),
    });
  } catch (err) {
    unguard();
    await inspection?.stop();
    if (err instanceof NatsUnreachableError) throw new CliError(err.message, 1);
    if (err instanceof ModelConfigError) throw new CliError(`${file}: ${err.message}`);
    if (err instanceof Error && /^invalid nodeId/.test(err.message)) throw new CliError(`--node: ${err.message.replace(/^invalid nodeId "[^"]*": /, "")}`);
    throw err;
  }

  const where = nats ? serversOf(nats) : "in-process bus";
  const mode = options.status ?? "auto";
  const tty = mode === "auto" ? Boolean(out.isTTY) : false;
  out.write(
    `ensoul up: node ${node.id} of cluster ${node.cluster} on ${where}; souls: ${node.souls.join(", ") || "(none)"}; data in ${nodeDataDir(options.data ?? loaded.config.data, node.id)}\n`,
  );
  if (inspection) out.write(`ensoul up: machines streamed to the Stately inspector at ${inspection.url}\n`);
  const metricsServer =
    metrics &&
    (await serveNodeMetrics(metrics, node, async () => {
      await node.stop().catch(() => undefined);
      await inspection?.stop();
    }));
  if (metricsServer) out.write(`ensoul up: metrics at ${metricsServer.url}\n`);
  const debuggerServer =
    debugAt !== undefined &&
    (await openDebugger(node.bus, debugAt, env, node.id).catch(async (err: unknown) => {
      await node.stop().catch(() => undefined);
      await metricsServer?.close();
      await inspection?.stop();
      throw err;
    }));
  if (debuggerServer) out.write(debuggerLine("up", debuggerServer, env));
  for (const b of Object.values(node.registry.getSnapshot().context.bridges)) {
    out.write(`ensoul up: bridge ${b.name} (${b.type}, soul ${b.soul}): ${b.state}${b.url ? ` at ${b.url}` : ""}${b.state === "failed" && b.lastError ? `: ${b.lastError}` : ""}\n`);
  }
  const display = mode === "off" ? { note: (l: string) => void out.write(`${l}\n`), stop: () => undefined } : startStatusDisplay({ registry: node.registry, out, tty, where, shows: node.owns });
  // Signals are taken before "ready": a supervisor may send SIGTERM the moment it reads it.
  const shutdown = watchShutdown({ command: "up", finishing: `stopping node ${node.id}: finishing the running turns…`, note: display.note });
  // Its outcome is awaited below, whoever stopped the node (a signal, or `ensoul stop`).
  shutdown.signal.addEventListener("abort", () => void node.stop().catch(() => undefined), { once: true });
  out.write(tty ? "" : `ensoul up: ready\n`);
  const talk = (options.console ?? Boolean(process.stdin.isTTY))
    ? (await import("./upConsole.ts")).startUpConsole(node, { input: process.stdin, note: (l) => display.note(l), user: env.USER || "user" })
    : undefined;
  if (talk) display.note(`ensoul up: talk to a soul with @<soul> <text>`);
  let failed: unknown;
  try {
    await node.stopped;
    await node.stop().catch((err: unknown) => (failed = err));
  } finally {
    talk?.stop();
    shutdown.dispose();
    display.stop();
    await metricsServer?.close();
    if (debuggerServer) await debuggerServer.stop();
    await inspection?.stop();
    unguard();
  }
  // Each failed step was reported as it failed; the exit says the stop was not clean.
  if (failed) throw new CliError(failed instanceof Error ? failed.message : String(failed), 1);
  const souls = [...node.registry.getSnapshot().context.souls.values()];
  out.write(`ensoul up: node ${node.id} stopped; ${souls.reduce((n, s) => n + s.turns, 0)} committed turns persisted\n`);
}

type MetricsModule = typeof import("../metrics/index.ts");
type MetricsServer = Awaited<ReturnType<MetricsModule["serveMetrics"]>>;

/** `--metrics`, checked before the node starts; prom-client is loaded only when it is given. */
async function metricsFlag(value: string): Promise<{ module: MetricsModule; address: ReturnType<MetricsModule["parseMetricsAddress"]> }> {
  const module = await import("../metrics/index.ts");
  try {
    return { module, address: module.parseMetricsAddress(value) };
  } catch (err) {
    throw err instanceof module.MetricsAddressError ? new CliError(err.message) : err;
  }
}

/** The node's metrics on their port; if the port cannot be had, the node is stopped (`undo`) and the command fails. */
async function serveNodeMetrics({ module, address }: Awaited<ReturnType<typeof metricsFlag>>, node: EnsoulNode, undo: () => Promise<unknown>): Promise<MetricsServer> {
  const log = rootLogger().child({ node: node.id });
  try {
    return await module.serveMetrics(node.metrics!, address, (err) => log.error(`could not collect the metrics: ${(err as Error).message}`));
  } catch (err) {
    await undo();
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "EADDRINUSE" ? "the port is in use" : code === "EACCES" ? "permission denied" : (err as Error).message;
    throw new CliError(`--metrics: cannot listen on ${address.host}:${address.port} (${why})`, 1);
  }
}
