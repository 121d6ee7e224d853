/**
 * `ensoul chat` as a user runs it: the real `ensoul` binary in a child process, stdin piped,
 * LMDB in a temp directory. One run on the offline model, one through the real Anthropic SDK
 * against a local server that speaks the Messages API.
 */
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runEnsoul, type RunResult } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";
import { startAnthropicServer, type ScriptedServer } from "../support/wire/anthropicServer.ts";

const runChat = (lines: string[], env: Record<string, string>, args: string[] = []): Promise<RunResult> =>
  runEnsoul(["chat", ...args], { lines, env, timeoutMs: 30_000 });

const dirs = tempDirs("ensoul-chat-");
const tempData = () => dirs.make();
afterEach(() => dirs.cleanup());

describe("ensoul chat on the offline model", () => {
  it("answers each piped line and exits cleanly at end of input", async () => {
    const data = tempData();
    const result = await runChat(["hello there", "what is your name?", "tell me about tea"], {}, ["--data", data]);
    expect(result.stderr).not.toMatch(/Error|error:/);
    expect(result.code).toBe(0);
    const answers = result.stdout.split("\n").filter((l) => l.startsWith("Samantha: "));
    expect(answers).toHaveLength(3);
    expect(result.stdout).toMatch(/offline/i);
    // Answers are built from the conversation, not canned.
    expect(answers[2].toLowerCase()).toContain("tea");
    // Later answers draw on what was said before: the working memory reaches the model.
    expect(answers[2]).toContain('Earlier you told me "what is your name?"');
  });

  it("remembers the conversation across runs (LMDB in the data dir)", async () => {
    const data = tempData();
    await runChat(["my favourite colour is green"], {}, ["--data", data]);
    const second = await runChat(["do you remember me?"], {}, ["--data", data]);
    expect(second.code).toBe(0);
    // The greeting process ran in the first session; the second continues in conversation.
    const { stdout } = await runChatMemory(data);
    expect(stdout).toContain("my favourite colour is green");
    expect(stdout).toContain("do you remember me?");
    expect(second.stdout).toMatch(/Samantha: /);
  });

  it("rejects an unknown soul with one clear line", async () => {
    const result = await runChat([], {}, ["nobody", "--data", tempData()]);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("unknown soul 'nobody'");
  });
});

/** Reads the committed working memory straight from LMDB (the local node's, in `<data>/local`), as a second process would. */
async function runChatMemory(data: string): Promise<{ stdout: string }> {
  const { openStore } = await import("../../runtime/store/index.ts");
  const store = openStore({ path: join(data, "local") });
  try {
    const state = store.actor("samantha").loadState();
    return { stdout: JSON.stringify(state?.workingMemory ?? null) };
  } finally {
    await store.close();
  }
}

describe("ensoul chat through the anthropic provider", () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startAnthropicServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("sends the conversation to ANTHROPIC_BASE_URL and speaks the streamed answer", async () => {
    server.reset().enqueue(
      { type: "reply", text: "Hello from the wire, I am Samantha." },
      { type: "reply", text: "Tea is a fine topic." },
    );
    const secret = "sk-ant-test-never-print-me";
    const result = await runChat(["hi", "tea?"], { ANTHROPIC_API_KEY: secret, ANTHROPIC_BASE_URL: server.url }, [
      "--data",
      tempData(),
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Samantha: Hello from the wire, I am Samantha.");
    expect(result.stdout).toContain("Samantha: Tea is a fine topic.");
    expect(server.requests).toHaveLength(2);
    const body = server.requests[1].body as { stream?: boolean; messages: { content: unknown }[]; system?: unknown };
    expect(body.stream).toBe(true);
    // The second request carries the first exchange: memory flows through the provider.
    expect(JSON.stringify(body.messages)).toContain("hi");
    expect(JSON.stringify(body.messages)).toContain("Hello from the wire");
    expect(JSON.stringify(body.system ?? body.messages)).toContain("Samantha");
    expect(result.stdout + result.stderr).not.toContain(secret);
  });
});
