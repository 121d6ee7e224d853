/**
 * Claudius needs nothing changed to run on a real provider: with a key in the environment the
 * default registry and default model pick Anthropic (or Groq), and the soul's steps go there.
 * The SDKs are the real ones, pointed at local servers through the base-URL variables.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createDefaultRegistry, defaultModelName } from "../../../runtime/providers/index.ts";
import { claudius } from "../../../souls/claudius/index.ts";
import { startAnthropicServer } from "../../support/wire/anthropicServer.ts";
import { startGroqServer } from "../../support/wire/groqServer.ts";
import type { ScriptedServer } from "../../support/wire/scriptedServer.ts";
import { startClaudiusRig, type ClaudiusRig } from "../../support/souls/claudiusRig.ts";
import { pipelineAnswer } from "../../support/souls/pipelineAnswer.ts";
import { wireScript } from "../../support/souls/wireScript.ts";

let server: ScriptedServer | undefined;
let rig: ClaudiusRig | undefined;
afterEach(async () => {
  await rig?.close();
  await server?.close();
  rig = undefined;
  server = undefined;
});

const cases = [
  { provider: "anthropic", start: startAnthropicServer, env: (url: string) => ({ ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: url }), model: /^claude-/ },
  { provider: "groq", start: startGroqServer, env: (url: string) => ({ GROQ_API_KEY: "test", GROQ_BASE_URL: url }), model: /^llama-/ },
] as const;

describe("Claudius on a provider chosen by the environment", () => {
  for (const c of cases) {
    it(`runs on ${c.provider} when its key is set, one request per turn`, async () => {
      const s = (server = await c.start());
      const script = wireScript(s);
      const env = c.env(s.url);
      const defaultModel = defaultModelName(env);
      expect(defaultModel.startsWith(`${c.provider}:`)).toBe(true);
      rig = await startClaudiusRig({
        blueprint: () => claudius,
        cognition: { registry: createDefaultRegistry(env), defaultModel },
        requestCount: () => script.requests.length,
      });
      script.script(
        "pipeline",
        pipelineAnswer({ monologue: "New face.", dialogue: "Claudius. What needs making?", userModelCheck: false }),
        pipelineAnswer({ monologue: "A saw.", dialogue: "Sharpen it rip, ten points.", userModelCheck: false }),
      );
      const first = await rig.say("Hello.");
      expect(first).toMatchObject({ errors: [], spoken: ["Claudius. What needs making?"], process: "main", requests: 1 });
      const second = await rig.say("My saw binds.");
      expect(second).toMatchObject({ errors: [], spoken: ["Sharpen it rip, ten points."], process: "main", requests: 1 });
      expect(String(script.requests[0].body?.["model"])).toMatch(c.model);
      expect(script.requests.every((r) => r.stream)).toBe(true);
    });
  }
});
