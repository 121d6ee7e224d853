import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createAnthropicModel } from "../../../runtime/providers/anthropic.ts";
import { ConsensusError, consensus } from "../../../runtime/providers/consensus.ts";
import { createGroqModel } from "../../../runtime/providers/groq.ts";
import type { LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { ProviderError } from "../../../runtime/providers/ProviderError.ts";
import { startAnthropicServer } from "../../support/wire/anthropicServer.ts";
import { startGroqServer } from "../../support/wire/groqServer.ts";
import type { RecordedRequest, ScriptedServer } from "../../support/wire/scriptedServer.ts";

const user = { messages: [{ role: "user" as const, content: "How does the user feel?" }] };

let anthropicServer: ScriptedServer;
let groqServer: ScriptedServer;
let anthropic: LanguageModel;
let groq: LanguageModel;

/**
 * Model ids like "d150:some text" make the server wait 150ms and answer "some text";
 * "hang:..." never answers. With `barrier` set, every answer also waits until that many
 * requests have arrived at the two servers together: a consensus that asked one member
 * after another would never get its first answer.
 */
let barrier: { size: number; release: () => void; reached: Promise<void> } | undefined;
function holdUntilAll(size: number): void {
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (release = resolve));
  barrier = { size, release, reached };
}
function byModelId(req: RecordedRequest) {
  const id = String(req.body?.["model"] ?? "");
  if (id.startsWith("hang:")) return { type: "hang" as const };
  const match = /^d(\d+):([\s\S]*)$/.exec(id);
  if (!match) return undefined;
  if (barrier && anthropicServer.requests.length + groqServer.requests.length >= barrier.size) barrier.release();
  return { type: "reply" as const, after: barrier?.reached, delayMs: Number(match[1]), text: match[2] ?? "" };
}

beforeAll(async () => {
  [anthropicServer, groqServer] = await Promise.all([startAnthropicServer(), startGroqServer()]);
});
afterAll(async () => {
  await Promise.all([anthropicServer.close(), groqServer.close()]);
});
beforeEach(() => {
  barrier = undefined;
  anthropicServer.reset().handle(byModelId);
  groqServer.reset().handle(byModelId);
  anthropic = createAnthropicModel({ apiKey: "sk-ant-consensus-9911", baseURL: anthropicServer.url, timeoutMs: 5_000 });
  groq = createGroqModel({ apiKey: "gsk_consensus_9922", baseURL: groqServer.url, timeoutMs: 5_000 });
});

const member = (model: LanguageModel, delayMs: number, text: string) => ({ model, modelId: `d${delayMs}:${text}` });

describe("consensus", () => {
  it("asks every member at once: takes as long as the slowest answer, not the sum", async () => {
    // No answer leaves either server before all three requests are in: a serial
    // consensus would wait for its first answer until the deadline and fail.
    holdUntilAll(3);
    const result = await consensus(
      [member(anthropic, 350, "c"), member(groq, 150, "a"), member(anthropic, 250, "b")],
      user,
      { deadlineMs: 2_000, mode: "all" },
    );
    expect(result.answers.map((a) => a.text)).toEqual(["a", "b", "c"]); // arrival order
    expect(result.answers.map((a) => a.provider)).toEqual(["groq", "anthropic", "anthropic"]);
    expect(result.failures).toEqual([]);
    expect(result.winner).toBeUndefined();
    expect(result.elapsedMs).toBeGreaterThanOrEqual(340);
  });

  it("drops a member slower than the deadline into failures and does not wait for it", async () => {
    const started = performance.now();
    const result = await consensus(
      [member(anthropic, 100, "quick"), member(groq, 200, "steady"), { model: anthropic, modelId: "hang:late" }],
      user,
      { deadlineMs: 400 },
    );
    const elapsed = performance.now() - started;
    expect(result.answers.map((a) => a.text)).toEqual(["quick", "steady"]);
    expect(result.failures).toHaveLength(1);
    expect(result.failures[0]?.provider).toBe("anthropic:hang:late");
    expect(result.failures[0]?.error).toBeInstanceOf(ProviderError);
    expect((result.failures[0]?.error as ProviderError).kind).toBe("timeout");
    // The straggler never answers, so returning at all shows consensus did not wait for it.
    expect(elapsed).toBeGreaterThanOrEqual(390);
    // The straggler's HTTP request was cancelled, not left running.
    await new Promise((r) => setTimeout(r, 30));
    const late = anthropicServer.requests.find((r) => r.body?.["model"] === "hang:late");
    expect(late?.clientClosedEarly).toBe(true);
  });

  const Mood = z.object({ mood: z.enum(["happy", "sad", "curious"]), score: z.number() });

  it("votes on canonical JSON, stripping markdown fences", async () => {
    const result = await consensus(
      [
        member(anthropic, 10, '```json\n{"mood":"happy","score":1}\n```'),
        member(groq, 100, '{"score": 1, "mood": "happy"}'),
        member(anthropic, 200, '{"mood":"sad","score":0}'),
      ],
      user,
      { deadlineMs: 2_000, mode: "majority", schema: Mood },
    );
    expect(result.winner?.value).toEqual({ mood: "happy", score: 1 });
    expect(result.winner?.provider).toBe("anthropic");
    expect(result.tally?.map((t) => [t.key, t.votes])).toEqual([
      ['{"mood":"happy","score":1}', 2],
      ['{"mood":"sad","score":0}', 1],
    ]);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
  });

  it("breaks a tie in favour of the first answer to arrive", async () => {
    const result = await consensus(
      [member(anthropic, 200, '{"mood":"sad","score":0}'), member(groq, 20, '{"mood":"curious","score":2}')],
      user,
      { deadlineMs: 2_000, mode: "majority", schema: Mood },
    );
    expect(result.winner?.value).toEqual({ mood: "curious", score: 2 });
  });

  it("lists answers that fail the schema as format failures", async () => {
    const result = await consensus(
      [
        member(anthropic, 10, '{"mood":"ecstatic","score":9}'),
        member(groq, 10, "I think they are happy"),
        member(anthropic, 20, 'Sure! {"mood":"sad","score":0}'),
      ],
      user,
      { deadlineMs: 2_000, mode: "majority", schema: Mood },
    );
    expect(result.winner?.value).toEqual({ mood: "sad", score: 0 });
    expect(result.failures.map((f) => (f.error as ProviderError).kind)).toEqual(["format", "format"]);
    expect(result.failures.map((f) => f.text)).toContain("I think they are happy");
  });

  it("votes on normalised text when there is no schema", async () => {
    const result = await consensus(
      [member(anthropic, 10, "Yes"), member(groq, 80, "no"), member(anthropic, 160, "  yes ")],
      user,
      { deadlineMs: 2_000, mode: "majority", normalise: (t) => t.toLowerCase() },
    );
    expect(result.winner?.text).toBe("Yes");
    expect(result.tally?.[0]).toMatchObject({ key: "yes", votes: 2 });
  });

  it("throws a clear error when no answer is valid", async () => {
    const error = await consensus(
      [member(anthropic, 10, "nope"), member(groq, 10, '{"mood":1}')],
      user,
      { deadlineMs: 2_000, mode: "majority", schema: Mood },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConsensusError);
    const ce = error as ConsensusError;
    expect(ce.failures).toHaveLength(2);
    expect(ce.kind).toBe("format");
    expect(ce.message).toMatch(/no valid answer from 2 provider\(s\)/);
    expect(ce.message).toMatch(/not JSON/);
    expect(ce.message).toMatch(/does not match the schema/);
  });

  it("reports server failures alongside the answers that did arrive", async () => {
    groqServer.handle(() => ({ type: "error", status: 503 }));
    const result = await consensus([member(anthropic, 10, "fine"), member(groq, 10, "unused")], user, { deadlineMs: 2_000 });
    expect(result.answers.map((a) => a.text)).toEqual(["fine"]);
    expect((result.failures[0]?.error as ProviderError).kind).toBe("server");
  });

  it("fails as aborted when the caller's signal fires", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await consensus([member(anthropic, 500, "x"), member(groq, 500, "y")], { ...user, signal: controller.signal }, {
      deadlineMs: 2_000,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe("aborted");
  });
});
