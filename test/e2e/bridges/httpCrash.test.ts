/**
 * Exactly one answer across a crash: `ensoul up` with an HTTP bridge in a child process, a
 * perception taken (202) while the soul's model holds its answer, the node SIGKILLed in the
 * middle of the turn, started again on the same data. The client retries with the same
 * Idempotency-Key (a duplicate), and the soul's speech log shows exactly one answer.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { openSse } from "../../support/bridges/sse.ts";
import { until } from "../../support/cluster/busWatch.ts";
import { spawnNode, type NodeProcess } from "../../support/cluster/cliProcess.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { startAnthropicServer, type ScriptedServer } from "../../support/wire/anthropicServer.ts";
import { freePort } from "../../support/ports.ts";

const dirs = tempDirs("ensoul-http-crash-");
const TOKEN = "crash-test-token-41";
let server: ScriptedServer;
let release: () => void;
const nodes: NodeProcess[] = [];

beforeAll(async () => {
  server = await startAnthropicServer();
});
afterAll(async () => {
  release?.();
  await server.close();
  dirs.cleanup();
});
afterEach(async () => {
  for (const n of nodes.splice(0)) await n.kill("SIGKILL");
});

it("a node SIGKILLed between the perception and the reply answers once after it restarts", async () => {
  const barrier = new Promise<void>((resolve) => (release = resolve));
  server.reset().otherwise({
    type: "reply",
    after: barrier,
    text: "The one and only answer.",
  });
  const dir = dirs.make();
  const port = await freePort();
  writeFileSync(join(dir, "web.yaml"), `cluster: web\nsouls:\n  - { id: sam, blueprint: samantha }\nbridges:\n  - { type: http, soul: sam, options: { port: ${port} } }\n`);
  const env = { ANTHROPIC_API_KEY: "sk-ant-test-crash", ANTHROPIC_BASE_URL: server.url, ENSOUL_HTTP_TOKEN: TOKEN };
  const args = [join(dir, "web.yaml"), "--data", join(dir, "data")];
  const base = `http://127.0.0.1:${port}`;
  const headers = { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json", "Idempotency-Key": "crash-1" };
  const body = JSON.stringify({ content: "Are you there?", name: "Ada" });

  const first = spawnNode(args, env);
  nodes.push(first);
  await first.waitFor(/bridge http-sam \(http, soul sam\): online/);
  const accepted = await fetch(`${base}/v1/souls/sam/perceptions`, { method: "POST", headers, body });
  expect(accepted.status).toBe(202);
  const { id } = (await accepted.json()) as { id: string };
  await until(() => server.requests.length > 0, 30_000, "the turn's model request");
  await first.kill("SIGKILL");
  nodes.splice(nodes.indexOf(first), 1);

  const second = spawnNode(args, env);
  nodes.push(second);
  await second.waitFor(/bridge http-sam \(http, soul sam\): online/);
  const retried = await fetch(`${base}/v1/souls/sam/perceptions`, { method: "POST", headers, body });
  expect(await retried.json()).toEqual({ id, status: "duplicate" });
  release();
  const sse = await openSse(`${base}/v1/souls/sam/speech`, { Authorization: `Bearer ${TOKEN}`, "Last-Event-ID": "0" });
  await sse.until((es) => es.some((e) => e.event === "final" && JSON.parse(e.data).perception === id), 30_000);
  // Give a second answer, if there were one, time to show.
  await new Promise((r) => setTimeout(r, 500));
  sse.close();
  const finals = sse.events.filter((e) => e.event === "final").map((e) => JSON.parse(e.data) as { perception: string; text: string });
  expect(finals).toEqual([expect.objectContaining({ perception: id, text: "The one and only answer." })]);
}, 90_000);
