/**
 * `ensoul demo` (what `npm start` runs): the demo cluster in one process. Claudius with
 * Kothar whispering to him and the built-in gates (bouncer, length, budget), from
 * examples/demo.yaml, on the in-process bus, with LMDB in `<data>/<node>` (./.ensoul by
 * default). The terminal is bound to Claudius through the node: each line a perception on
 * the bus, each answer what the gates let through. Kothar's whispers, Claudius's process
 * changes and turns are shown as `· ` notes as they happen. With piped stdin it answers each
 * line in turn, then drains (every committed turn persisted) and exits at end of input. Ctrl-C
 * or SIGTERM ends it the same way after the running turn (shutdown.ts); a second one forces.
 * With --inspect, every machine of the node is streamed to the Stately inspector until the
 * node has stopped. With --debug, the debugger page (docs/DEBUGGER.md) watches the demo
 * cluster until the node has stopped.
 */
import { fileURLToPath } from "node:url";
import { resolve } from "node:path";
import { createSecretScanner } from "../../actors/gate/index.ts";
import { builtinSouls } from "../../souls/index.ts";
import { clusterSubjects, decodeEnvelope, isKind } from "../bus/index.ts";
import type { Inspection } from "../inspect/index.ts";
import { ConfigError, loadClusterConfig, ModelConfigError, nodeDataDir, startNode, type EnsoulNode } from "../node/index.ts";
import { defaultModelName } from "../providers/index.ts";
import { modelBanner } from "./chatCommand.ts";
import { CliError } from "./CliError.ts";
import { debuggerLine, debugPort, openDebugger } from "./debugFlag.ts";
import { inspectTarget, openInspection } from "./inspectFlag.ts";
import { guardProcess } from "./processGuard.ts";
import { chatOverBus } from "./natsChat.ts";
import { watchShutdown } from "./shutdown.ts";

export const DEMO_CONFIG = fileURLToPath(new URL("../../examples/demo.yaml", import.meta.url));
export const DEMO_SOUL = "claudius";

export interface DemoCommandOptions {
  /** Another cluster config to run instead of examples/demo.yaml. */
  config?: string;
  data: string;
  user: string;
  timeoutMs?: number;
  /** `--inspect [port|ws-url]`: true for the bare flag (the local relay on 8080). */
  inspect?: string | boolean;
  /** `--debug [port]`: true for the bare flag (port 4500). */
  debug?: string | boolean;
  env?: NodeJS.ProcessEnv;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WriteStream;
}

export async function demoCommand(o: DemoCommandOptions): Promise<void> {
  const env = o.env ?? process.env;
  const out = o.output ?? process.stdout;
  const file = o.config ?? DEMO_CONFIG;
  const target = inspectTarget(o.inspect);
  const debugAt = debugPort(o.debug);
  const loaded = await loadClusterConfig(file).catch((err: unknown) => {
    throw err instanceof ConfigError ? CliError.of(err) : err;
  });
  const entry = loaded.config.souls.find((s) => s.id === DEMO_SOUL);
  if (!entry) throw new CliError(`${file}: the demo needs a soul '${DEMO_SOUL}'`);
  const blueprint = typeof entry.blueprint === "string" ? builtinSouls[entry.blueprint] : entry.blueprint;
  const data = resolve(o.data);

  const inspection: Inspection | undefined = target ? await openInspection(target) : undefined;
  const shutdown = watchShutdown({ command: "demo", finishing: "finishing the turn…", note: (line) => void out.write(`${line}\n`) });
  // As under `ensoul up`: a failure nothing caught restarts the soul it belongs to, or ends the process with its context logged.
  const unguard = guardProcess();
  let node: EnsoulNode;
  try {
    node = await startNode({
      config: loaded,
      data,
      env,
      ...(inspection ? { inspect: inspection.inspect } : {}),
    });
  } catch (err) {
    unguard();
    shutdown.dispose();
    await inspection?.stop();
    if (err instanceof ModelConfigError) throw new CliError(`${file}: ${err.message}`);
    throw err;
  }
  const debuggerServer =
    debugAt !== undefined &&
    (await openDebugger(node.bus, debugAt, env, node.id).catch(async (err: unknown) => {
      await node.stop().catch(() => undefined);
      await inspection?.stop();
      shutdown.dispose();
      unguard();
      throw err;
    }));

  const note = (line: string) => void out.write(`· ${line}\n`);
  const scanner = createSecretScanner({ vault: [env.ANTHROPIC_API_KEY, env.GROQ_API_KEY].filter((v): v is string => typeof v === "string") });
  const safe = (text: string) => (scanner.scan(text).length ? "[withheld: it looks like it contains a secret]" : text.replace(/\s+/g, " ").trim());
  const subjects = clusterSubjects(node.cluster);
  const decode = (bytes: Uint8Array) => {
    const decoded = decodeEnvelope(bytes);
    return decoded.ok ? decoded.envelope : undefined;
  };
  let turns = 0;
  const subs = [
    node.bus.subscribe(subjects.whisper(DEMO_SOUL), (msg) => {
      const envelope = decode(msg.data);
      if (envelope && isKind(envelope, "whisper")) note(`${envelope.body.source ?? "a daimon"} whispers: ${safe(envelope.body.content)}`);
    }),
    node.bus.subscribe(subjects.events(DEMO_SOUL), (msg) => {
      const envelope = decode(msg.data);
      if (!envelope || !isKind(envelope, "event")) return;
      const d = (envelope.body.data ?? {}) as Record<string, unknown>;
      if (envelope.body.type === "soul.transition") note(`process: ${String(d.from)} → ${String(d.to)}`);
      else if (envelope.body.type === "soul.turn") {
        turns++;
        note(`turn ${String(d.turn)} done in ${String(d.process)}`);
      }
    }),
  ];

  const model = loaded.config.providers.souls?.[DEMO_SOUL] ?? blueprint?.models.default ?? loaded.config.providers.default ?? defaultModelName(env);
  const daimons = loaded.config.daimons.filter((d) => d.soul === DEMO_SOUL).map((d) => `${d.name ?? d.builtin ?? "daimon"} (${d.mode ?? "whisper"})`);
  const gates = loaded.config.gates.map((g) => ("builtin" in g && g.builtin ? g.builtin : "remote" in g ? `remote ${String(g.remote)}` : "gate"));
  const speaker = blueprint?.name ?? DEMO_SOUL;
  const banner = [
    `ensoul demo · ${speaker} · ${modelBanner(model)}`,
    `· daimons: ${daimons.join(", ") || "none"} · gates: ${gates.join(", ") || "none"} · memory in ${nodeDataDir(data, node.id)}`,
  ].join("\n");

  if (inspection) out.write(`ensoul demo: machines streamed to the Stately inspector at ${inspection.url}\n`);
  if (debuggerServer) out.write(debuggerLine("demo", debuggerServer, env));
  let failed: unknown;
  try {
    await chatOverBus({
      bus: node.bus,
      soul: DEMO_SOUL,
      cluster: node.cluster,
      user: o.user,
      speaker,
      banner,
      ...(o.timeoutMs !== undefined ? { turnTimeoutMs: o.timeoutMs } : {}),
      ...(o.input ? { input: o.input as unknown as import("node:stream").Readable } : {}),
      output: out,
      stop: shutdown.signal,
      onInterrupt: () => shutdown.interrupt("SIGINT"),
    });
    // What the daimon divines about the last answer arrives after it: let it land (unless told to stop).
    if (!shutdown.signal.aborted) await node.idle();
  } catch (err) {
    failed = err;
  } finally {
    for (const s of subs) s.unsubscribe();
    try {
      await node.stop();
    } finally {
      if (debuggerServer) await debuggerServer.stop();
      await inspection?.stop();
      shutdown.dispose();
      unguard();
    }
  }
  if (failed) throw failed;
  out.write(`ensoul demo: stopped; ${turns} turn(s) this session, all committed turns persisted in ${nodeDataDir(data, node.id)}\n`);
}
