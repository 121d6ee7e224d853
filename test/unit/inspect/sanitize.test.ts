import { describe, expect, it } from "vitest";
import { WorkingMemory } from "../../../runtime/cognition/WorkingMemory.ts";
import {
  browserInspection,
  createInspection,
  REDACTED,
  sanitizeContext,
  sanitizeEvent,
  sanitizeValue,
} from "../../../runtime/inspect/inspection.ts";

describe("sanitizeContext", () => {
  it("redacts key-like fields at any depth", () => {
    const context = {
      apiKey: "sk-live-1",
      groqApiKey: "gsk-2",
      accessToken: "tok-3",
      nested: { clientSecret: "s-4", password: "hunter2", Authorization: "Basic abc", cookie: "sid=1", list: [{ refreshToken: "r-5" }] },
      perception: { content: "hello", meta: { api_key: "k-6" } },
      current: "greeting",
      turn: 3,
    };
    expect(sanitizeContext(context)).toEqual({
      apiKey: REDACTED,
      groqApiKey: REDACTED,
      accessToken: REDACTED,
      nested: { clientSecret: REDACTED, password: REDACTED, Authorization: REDACTED, cookie: REDACTED, list: [{ refreshToken: REDACTED }] },
      perception: { content: "hello", meta: { api_key: REDACTED } },
      current: "greeting",
      turn: 3,
    });
    // The input is left alone: the inspector gets a copy.
    expect(context.apiKey).toBe("sk-live-1");
  });

  it("redacts credential-looking values wherever they appear, inside text too", () => {
    const anthropic = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx";
    const clean = sanitizeContext({
      memories: [{ role: "user", content: `here is my key ${anthropic}, keep it safe` }],
      header: "Bearer abcdefghijklmnopqrstuvwxyz.123",
      slack: "xoxb-1234567890-abcdefghij",
      github: "ghp_abcdefghijklmnopqrstuvwxyz0123",
      aws: "AKIAABCDEFGHIJKLMNOP",
    });
    const text = JSON.stringify(clean);
    for (const secret of [anthropic, "abcdefghijklmnopqrstuvwxyz.123", "xoxb-1234567890", "ghp_abc", "AKIAABCD"]) expect(text).not.toContain(secret);
    expect(text).toContain(`here is my key ${REDACTED}, keep it safe`);
  });

  it("shows long working memories as a preview, through their toJSON", () => {
    let memory = new WorkingMemory({ soulName: "Sam" });
    for (let i = 0; i < 100; i++) memory = memory.withMemory({ role: "user", content: `m${i}` });
    const clean = sanitizeContext({ workingMemory: memory }) as { workingMemory: { soulName: string; memories: unknown[] } };
    expect(clean.workingMemory.soulName).toBe("Sam");
    expect(clean.workingMemory.memories).toHaveLength(11);
    expect(clean.workingMemory.memories[5]).toBe("… 90 more …");
    expect((clean.workingMemory.memories[10] as { content: string }).content).toBe("m99");
  });

  it("copes with what raw actor contexts hold: cycles, functions, runtime objects, deep graphs", () => {
    class Runtime {
      store = { big: "x".repeat(10) };
    }
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic["self"] = cyclic;
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 30; i++) deep = { deep };
    const clean = sanitizeContext({
      cyclic,
      interrupted: () => false,
      actions: [{ name: "Think", description: "d", handleActionUse: () => undefined }],
      runtime: new Runtime(),
      signal: new AbortController().signal,
      shown: { toJSON: () => ({ soulId: "sam" }) },
      error: new Error("boom"),
      map: new Map([["a", 1]]),
      big: 10n,
      deep,
    }) as Record<string, unknown>;
    expect(clean["cyclic"]).toEqual({ name: "loop", self: "[circular]" });
    expect("interrupted" in clean).toBe(false);
    expect(clean["actions"]).toEqual([{ name: "Think", description: "d" }]);
    expect(clean["runtime"]).toBe("[Runtime]");
    expect(clean["signal"]).toBe("[AbortSignal]");
    expect(clean["shown"]).toEqual({ soulId: "sam" });
    expect(clean["error"]).toEqual({ name: "Error", message: "boom" });
    expect(clean["map"]).toEqual({ a: 1 });
    expect(clean["big"]).toBe("10");
    expect(JSON.stringify(clean["deep"])).toContain('"[…]"');
    expect(() => JSON.stringify(clean)).not.toThrow();
  });

  it("leaves actors without a context without one, and cuts very long strings but not machine definitions", () => {
    expect(sanitizeContext(undefined)).toBeUndefined();
    const long = "y".repeat(10_000);
    expect((sanitizeValue({ note: long }) as { note: string }).note.length).toBeLessThan(4100);
    expect((sanitizeValue({ definition: long }) as { definition: string }).definition).toBe(long);
  });

  it("sanitizes events the same way (a PERCEIVE carries the perception)", () => {
    const event = sanitizeEvent({ type: "PERCEIVE", perception: { content: "hi", meta: { slackToken: "xoxb-secret" } } });
    expect(event).toEqual({ type: "PERCEIVE", perception: { content: "hi", meta: { slackToken: REDACTED } } });
  });
});

describe("inspection targets", () => {
  it("offers the browser inspector only where a window exists", () => {
    expect(typeof (globalThis as { window?: unknown }).window).toBe("undefined");
    expect(browserInspection()).toBeUndefined();
    expect(() => createInspection({ mode: "browser" })).toThrow(/needs a browser window/);
  });

  it("stops at once when nothing ever answered", async () => {
    const inspection = createInspection({ mode: "ws", url: "ws://127.0.0.1:9" });
    const started = Date.now();
    await inspection.stop();
    await inspection.ready(); // settled by the stop, never left hanging
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
