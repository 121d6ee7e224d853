/**
 * Ctrl-C (SIGINT) and SIGTERM in the middle of a turn, as a user sends them: the real
 * `ensoul` binary in a child process, stdin left open as a terminal would, and a model that
 * answers only when the test lets it (the real Anthropic SDK against a local server holding
 * each answer behind a barrier). The first signal says it is finishing the turn, the turn
 * ends and is committed, and the command exits 0; a second signal forces the exit.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runEnsoul, startEnsoul, type EnsoulSession } from "../support/cli/runEnsoul.ts";
import { until } from "../support/cluster/busWatch.ts";
import { tempDirs } from "../support/tempDirs.ts";
import { startAnthropicServer, type ScriptedServer } from "../support/wire/anthropicServer.ts";

const dirs = tempDirs("ensoul-shutdown-");
let server: ScriptedServer;
/** Opens the barrier: every answer held so far, and every later one, goes out. */
let release: () => void;

beforeAll(async () => {
  server = await startAnthropicServer();
});
afterAll(async () => {
  release?.();
  await server.close();
});
beforeEach(() => {
  const barrier = new Promise<void>((resolve) => (release = resolve));
  server.reset().otherwise({
    type: "reply",
    after: barrier,
    text: '<internal_monologue>A careful answer.</internal_monologue><external_dialogue verb="said">Here is my slow answer.</external_dialogue>',
  });
});
afterEach(() => {
  release();
  dirs.cleanup();
});

const env = () => ({ ANTHROPIC_API_KEY: "sk-ant-test-shutdown", ANTHROPIC_BASE_URL: server.url, USER: "tom" });

/** Starts the command, types one line and resolves once its turn is waiting on the model. */
async function midTurn(args: string[], banner: RegExp): Promise<EnsoulSession> {
  const session = startEnsoul(args, { env: env(), timeoutMs: 60_000 });
  await session.waitFor(banner);
  session.type("Hello, I'm Tom.");
  await until(() => server.requests.length > 0, 30_000, "the turn's model request");
  return session;
}

describe("stopping in the middle of a turn", () => {
  it("ensoul demo: the first Ctrl-C finishes the turn, commits it and exits 0", async () => {
    const data = dirs.make();
    const demo = await midTurn(["demo", "--data", data, "--user", "Tom"], /ensoul demo · Claudius/);
    demo.child.kill("SIGINT");
    await demo.waitFor(/SIGINT, finishing the turn…/);
    release();
    const result = await demo.exited;
    expect(result.stderr).not.toMatch(/Error|Unhandled/);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Claudius: Here is my slow answer.");
    expect(result.stdout).toMatch(/ensoul demo: stopped; 1 turn\(s\) this session/);

    const memory = await runEnsoul(["memory", "claudius", "--data", data]);
    expect(memory.stdout.split("\n")[0]).toMatch(/ · 1 turns · inbox 0 pending, 0 failed/);
    expect(memory.stdout).toContain("Hello, I'm Tom.");
    expect(memory.stdout).toContain("Here is my slow answer.");
  }, 90_000);

  it("ensoul demo: a second Ctrl-C forces the exit, non-zero, without waiting for the model", async () => {
    const demo = await midTurn(["demo", "--data", dirs.make(), "--user", "Tom"], /ensoul demo · Claudius/);
    demo.child.kill("SIGINT");
    await demo.waitFor(/SIGINT, finishing the turn…/);
    demo.child.kill("SIGINT");
    const result = await demo.exited;
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stdout + result.stderr).toMatch(/SIGINT again: exiting now/);
    expect(result.stdout).not.toContain("Here is my slow answer.");
  }, 90_000);

  it("ensoul chat: SIGTERM finishes the turn, commits it and exits 0", async () => {
    const data = dirs.make();
    const chat = await midTurn(["chat", "samantha", "--data", data, "--as", "Tom"], /^Samantha · /m);
    chat.child.kill("SIGTERM");
    await chat.waitFor(/SIGTERM, finishing the turn…/);
    release();
    const result = await chat.exited;
    expect(result.stderr).not.toMatch(/Error|Unhandled/);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Samantha: /);

    const memory = await runEnsoul(["memory", "samantha", "--data", data]);
    expect(memory.stdout.split("\n")[0]).toMatch(/ · 1 turns · inbox 0 pending, 0 failed/);
    expect(memory.stdout).toContain("Hello, I'm Tom.");
  }, 90_000);

  it("ensoul demo between turns: Ctrl-C stops at once and exits 0", async () => {
    const demo = startEnsoul(["demo", "--data", dirs.make()], { env: env(), timeoutMs: 60_000 });
    await demo.waitFor(/ensoul demo · Claudius/);
    demo.child.kill("SIGINT");
    const result = await demo.exited;
    expect(result.stderr).not.toMatch(/Error|Unhandled/);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/ensoul demo: stopped; 0 turn\(s\) this session/);
  }, 60_000);
});
