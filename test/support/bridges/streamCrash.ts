/**
 * A streamed reply cut by a crash, as a new user meets it: `ensoul up` with a chat bridge in a
 * child process, pointed at a fake platform and a model server in the test's process; the model
 * streams a long answer; ENSOUL_FAULTS SIGKILLs the node at one point of the stream; a node
 * starts again on the same data (in the test's process: a spawn costs seconds on a busy
 * machine, and a fresh node reads only what LMDB kept). The platform must end with one reply
 * holding the whole answer.
 *
 * The kill points, in the order a stream meets them (docs/GUARANTEES.md):
 * - `first post, before`: the first piece's post never reached the platform (the turn still runs: it runs again);
 * - `first post, after`: the platform took it, the ledger never heard its reference;
 * - `between pieces`: the first piece is posted and recorded, the model still streaming;
 * - `final taken`: the turn committed, the bridge recorded its final, nothing of the final posted yet.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import type { FaultRule } from "../../../runtime/faults/index.ts";
import { loadClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { spawnNode, type NodeProcess } from "../cluster/cliProcess.ts";
import { tempDirs } from "../tempDirs.ts";
import { startAnthropicServer, type ScriptedServer } from "../wire/anthropicServer.ts";

/** About the length of the answer the issue saw cut at its 60th character. */
export const ANSWER =
  "The first sentence of this answer arrives on its own. " +
  "A second sentence follows it, a little longer than the first one was. " +
  "A third one comes after both of them, " +
  "and the last words close the answer so that the reply is whole.";

export interface KillPoint {
  name: string;
  rule: FaultRule;
  /** The turn had not committed when the node died: the restarted node runs it again (a second model request). */
  reruns: boolean;
}

export const KILL_POINTS: readonly KillPoint[] = [
  { name: "first post, before the platform had it", rule: { point: "bridge.post", match: { op: "post", part: 0, final: false }, fault: { kind: "crash" } }, reruns: true },
  { name: "first post, after the platform took it, before the ledger recorded it", rule: { point: "bridge.post", match: { op: "post", part: 0, final: false }, fault: { kind: "crash", after: true } }, reruns: true },
  { name: "between pieces, the model still streaming", rule: { point: "bridge.record", match: { kind: "post", part: 0, confirmed: true, final: false }, fault: { kind: "crash", after: true } }, reruns: true },
  // Not the final's edit itself: when the draft's own edits already show the whole text, the final edits nothing.
  { name: "the final committed and taken by the bridge, before any of it was posted", rule: { point: "bridge.record", match: { kind: "reply" }, fault: { kind: "crash", after: true } }, reruns: false },
];

/** What a test tells the helper about its platform. */
export interface CrashPlatform {
  /** The bridge's entry in the cluster config, for soul `sam`. */
  bridge(): Promise<string>;
  env(): Record<string, string>;
  /** Says something to the soul; resolves to the message's id on the platform. */
  send(text: string): Promise<string>;
  /** The bot's replies to that message, as the platform shows them now. */
  replies(to: string): string[];
}

/** A turn's first model request streams slowly (the kill lands mid-stream), a re-run's at once. */
function scriptModel(model: ScriptedServer): void {
  model.reset().enqueue({ type: "reply", text: ANSWER, chunkDelayMs: 60 }).otherwise({ type: "reply", text: ANSWER });
}

interface CrashRun {
  dir: string;
  model: ScriptedServer;
  platform: CrashPlatform;
  kill: KillPoint;
  /** The child nodes and the restarted node, for the test's clean-up. */
  nodes: NodeProcess[];
  restarted: EnsoulNode[];
}

/**
 * The model server, the data directories and the nodes of a file of crash tests, set up and
 * cleaned up by the file's hooks; `crash(kill)` runs one kill point against `platform`.
 */
export function streamCrashRig(platform: CrashPlatform): { crash(kill: KillPoint): Promise<void> } {
  const dirs = tempDirs("ensoul-stream-crash-");
  const nodes: NodeProcess[] = [];
  const restarted: EnsoulNode[] = [];
  let model: ScriptedServer | undefined;
  beforeAll(async () => void (model = await startAnthropicServer()));
  afterAll(async () => {
    await model?.close();
    dirs.cleanup();
  });
  afterEach(async () => {
    for (const n of nodes.splice(0)) await n.kill("SIGKILL");
    for (const n of restarted.splice(0)) await n.stop();
  });
  return { crash: (kill) => crashMidStream({ dir: dirs.make(), model: model!, platform, kill, nodes, restarted }) };
}

async function crashMidStream(o: CrashRun): Promise<void> {
  scriptModel(o.model);
  const config = join(o.dir, "cluster.yaml");
  writeFileSync(config, `cluster: streamcrash\nsouls:\n  - { id: sam, blueprint: samantha }\nbridges:\n  - ${await o.platform.bridge()}\n`);
  const env = { ANTHROPIC_API_KEY: "sk-ant-test-stream-crash", ANTHROPIC_BASE_URL: o.model.url, ...o.platform.env() };
  const first = spawnNode([config, "--data", join(o.dir, "data")], { ...env, ENSOUL_FAULTS: JSON.stringify([o.kill.rule]) });
  o.nodes.push(first);
  await first.waitFor(/bridge \S+ \(\w+, soul sam\): online/, 60_000);
  const sent = await o.platform.send("tell me something long");
  const notKilled = new Promise<string>((resolve) => setTimeout(() => resolve("not killed within 60 s"), 60_000).unref());
  expect(await Promise.race([first.exited, notKilled]), `the node was killed at "${o.kill.name}":\n${first.output()}`).toBe(128);
  const cut = o.platform.replies(sent);

  const log: string[] = [];
  const second = await startNode({ config: await loadClusterConfig(config), data: join(o.dir, "data"), env, log: (line) => void log.push(line) });
  o.restarted.push(second);
  const until = Date.now() + 30_000;
  while (!o.platform.replies(sent).some((r) => r.includes("the reply is whole")) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  // A second reply, if there were one, has time to show.
  await new Promise((r) => setTimeout(r, 500));
  expect(o.platform.replies(sent), `cut at ${JSON.stringify(cut)}; the restarted node:\n${log.join("\n")}`).toEqual([ANSWER]);
  expect(o.model.requests.length, o.kill.reruns ? "the turn ran again" : "the committed final came from the ledger, not a new turn").toBe(o.kill.reruns ? 2 : 1);
}
