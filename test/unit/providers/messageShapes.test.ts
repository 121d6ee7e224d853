import { describe, expect, it } from "vitest";
import { toAnthropicMessages } from "../../../runtime/providers/anthropic.ts";

describe("toAnthropicMessages", () => {
  it("keeps leading system context in `system`", () => {
    const out = toAnthropicMessages([
      { role: "system", content: "You are Ada." },
      { role: "user", content: "hi", name: "bob" },
    ]);
    expect(out.system).toBe("You are Ada.");
    expect(out.messages).toEqual([{ role: "user", content: "bob: hi" }]);
  });

  it("sends a step's closing command as the final user turn, so a thought is never a prefill", () => {
    const out = toAnthropicMessages([
      { role: "system", content: "You are Ada." },
      { role: "user", content: "hi" },
      { role: "assistant", content: "Ada thought: they seem tired." },
      { role: "system", content: "Reply to the user." },
    ]);
    expect(out.system).toBe("You are Ada.");
    expect(out.messages.at(-1)).toEqual({ role: "user", content: "Reply to the user." });
    expect(out.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  });

  it("merges the command into a user turn that is already last", () => {
    const out = toAnthropicMessages([
      { role: "user", content: "hi" },
      { role: "system", content: "Reply briefly." },
    ]);
    expect(out.messages).toEqual([{ role: "user", content: "hi\n\nReply briefly." }]);
    expect(out.system).toBeUndefined();
  });

  it("opens with a user turn when the soul spoke first", () => {
    const out = toAnthropicMessages([
      { role: "system", content: "core" },
      { role: "assistant", content: "Hello, I am Ada." },
      { role: "system", content: "Greet again." },
    ]);
    expect(out.messages[0].role).toBe("user");
    expect(out.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(out.messages.at(-1)?.content).toBe("Greet again.");
  });

  it("turns a system-only prompt into the one user turn", () => {
    expect(toAnthropicMessages([{ role: "system", content: "Say hi." }])).toEqual({
      messages: [{ role: "user", content: "Say hi." }],
    });
  });
});

describe("toGroqMessages", () => {
  it("passes API-safe names and folds the others into the content", async () => {
    const { toGroqMessages } = await import("../../../runtime/providers/groq.ts");
    const out = toGroqMessages([
      { role: "user", content: "hi", name: "bob_1" },
      { role: "user", content: "hello", name: "Ana María" },
    ]);
    expect(out[0]).toEqual({ role: "user", content: "hi", name: "bob_1" });
    expect(out[1]).toEqual({ role: "user", content: "Ana María: hello" });
  });
});
