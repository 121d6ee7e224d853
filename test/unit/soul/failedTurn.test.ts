/**
 * How a failed turn is told (actors/soul/FailedTurn.ts, soulSource.ts): the reason in one line,
 * JavaScript's own error kinds named, no credential in it, and for an error the soul's code
 * threw, the first frame of the stack in the soul's own source, never ensoul's runtime, a
 * package or Node; read back the same from a `soul.error` event envelope.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { failedTurnLine, failedTurnOf, failureReason, soulSourceOf, turnFailureOf } from "../../../actors/soul/index.ts";
import { makeEnvelope } from "../../../runtime/bus/index.ts";
import { repoRoot } from "../../support/cli/runEnsoul.ts";

/** An error whose stack is the given frames, innermost first. */
const thrown = (message: string, frames: string[], name = "Error") => Object.assign(new Error(message), { name, stack: [`${name}: ${message}`, ...frames.map((f) => `    at ${f}`)].join("\n") });

describe("where a soul's code threw", () => {
  const cwd = "/home/ada/project";
  it("is the first frame past Node and the packages the soul called, relative to the working directory", () => {
    const error = thrown("no", [
      "parse (node:internal/json:1:1)",
      "Object.safeParse (/home/ada/project/node_modules/zod/index.js:10:3)",
      "Object.conversation (/home/ada/project/souls/ada/talk.ts:7:17)",
      `TurnRunner.run (${join(repoRoot, "actors", "soul", "TurnRunner.ts")}:125:25)`,
      "async helper (/home/ada/project/souls/ada/util.ts:2:1)",
    ]);
    expect(soulSourceOf(error, cwd)).toBe("souls/ada/talk.ts:7:17");
  });

  it("is none for an error ensoul's runtime raised, even below the soul's call (a provider, a budget, a refused hand-over)", () => {
    const error = thrown("429 from the provider", [
      "Anthropic.request (/home/ada/project/node_modules/@anthropic-ai/sdk/client.js:1:1)",
      `AnthropicModel.complete (${join(repoRoot, "runtime", "providers", "anthropic.ts")}:80:11)`,
      "async conversation (/home/ada/project/souls/ada/talk.ts:5:33)",
    ]);
    expect(soulSourceOf(error, cwd)).toBeUndefined();
  });

  it("reads file URLs (ES modules without a loader), anonymous frames, and shows a file outside the working directory whole", () => {
    expect(soulSourceOf(thrown("no", ["file:///srv/souls/ada/talk.mjs:3:9"]), cwd)).toBe("/srv/souls/ada/talk.mjs:3:9");
    expect(soulSourceOf(thrown("no", ["async Promise.all (index 0)", "<anonymous> (/home/ada/project/souls/x.ts:1:2)"]), cwd)).toBe("souls/x.ts:1:2");
  });

  it("counts a blueprint that ships with ensoul (souls/) as soul code, and finds none in a stack of the runtime alone", () => {
    expect(soulSourceOf(thrown("no", [`x (${join(repoRoot, "souls", "claudius", "main.ts")}:4:5)`]), repoRoot)).toBe("souls/claudius/main.ts:4:5");
    expect(soulSourceOf(thrown("no", [`x (${join(repoRoot, "runtime", "node", "Node.ts")}:4:5)`, "y (node:internal/x:1:1)"]), cwd)).toBeUndefined();
    expect(soulSourceOf("a string thrown", cwd)).toBeUndefined();
  });
});

describe("the reason of a failed turn", () => {
  it("names JavaScript's own kinds of error, not the runtime's, and says where a real throw in this file was", () => {
    let error: unknown;
    try {
      (undefined as unknown as { x: number }).x;
    } catch (err) {
      error = err;
    }
    const failure = turnFailureOf(error);
    expect(failure.message).toMatch(/^TypeError: Cannot read properties of undefined/);
    expect(failure.at).toMatch(/^test\/unit\/soul\/failedTurn\.test\.ts:\d+:\d+$/);
    const named = Object.assign(new Error("process 'a' handed over to 'b'"), { name: "TurnError", stack: "TurnError: x" });
    expect(turnFailureOf(named)).toEqual({ message: "process 'a' handed over to 'b'" });
    expect(turnFailureOf("a string")).toEqual({ message: "a string" });
  });

  it("is one line, with no credential in it", () => {
    const line = failedTurnLine("Ada", { message: "provider said:\n  401 for key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789\n", at: "souls/ada/talk.ts:3:1" });
    expect(line).not.toContain("\n");
    expect(line).not.toContain("abcdefghijklmnop");
    expect(line).toMatch(/^Ada could not answer: provider said: 401 for key \S+ at souls\/ada\/talk\.ts:3:1$/);
  });

  it("is read back from the soul's own soul.error event of phase process, and from nothing else", () => {
    const event = (from: string, data: Record<string, unknown>, type = "soul.error") => makeEnvelope("event", from, "ada", { type, data }, { causation: "p1" });
    const failed = failedTurnOf(event("ada", { soulId: "ada", phase: "process", message: "boom", at: "souls/ada/talk.ts:3:1", process: "talk" }));
    expect(failed).toEqual({ soulId: "ada", perceptionId: "p1", message: "boom", at: "souls/ada/talk.ts:3:1", process: "talk" });
    expect(failureReason(failed!)).toBe("boom at souls/ada/talk.ts:3:1");
    expect(failedTurnOf(event("ada", { phase: "subprocess", message: "x" }))).toBeUndefined();
    expect(failedTurnOf(event("node-n1", { phase: "process", message: "x" }))).toBeUndefined();
    expect(failedTurnOf(event("ada", { phase: "process" }, "soul.turn"))).toBeUndefined();
  });
});
