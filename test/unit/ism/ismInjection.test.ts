/**
 * The ISM's model calls (the action choice, and the steps its handlers run) carry the working
 * memory, earlier user messages included: each one must reach the model fenced as untrusted
 * and neutralised, never with its tags live.
 */
import { describe, expect, it } from "vitest";
import {
  externalDialog,
  internalMonologue,
  neutralizeTags,
  parseTaggedAnswer,
  UNTRUSTED_NOTICE,
  WorkingMemory,
} from "../../../runtime/cognition/index.ts";
import { runIsm, type IsmAction } from "../../../actors/ism/index.ts";
import { fencedUserText } from "../../support/pipeline/echoModel.ts";
import { INJECTION_CORPUS } from "../../support/pipeline/injectionCorpus.ts";
import { choice, scriptedModel, withModel } from "./support.ts";

const actions: IsmAction[] = [
  {
    name: "Think",
    description: "Think about the problem",
    handleActionUse: async (workingMemory, _internal, recurse) => {
      const [thought] = await internalMonologue(workingMemory, "Think it through.");
      return recurse({ workingMemory: thought });
    },
  },
  {
    name: "Respond",
    description: "Answer",
    handleActionUse: async (workingMemory) => {
      const [answered] = await externalDialog(workingMemory, "Answer.");
      return answered;
    },
  },
];

describe("ISM prompts with user messages in memory", () => {
  it.each(INJECTION_CORPUS.map((c) => [c.name, c.text] as const))("choice, Think and Respond all see it fenced: %s", async (_name, text) => {
    const model = scriptedModel([
      choice(["Think"], "look closer"),
      'Samantha pondered: "Hm."',
      choice(["Respond"], "ready"),
      'Samantha said: "Done."',
    ]);
    const memory = new WorkingMemory({
      soulName: "Samantha",
      memories: [
        { role: "system", content: "You are Samantha.", region: "core" },
        { role: "user", name: "kev", content: text },
        { role: "assistant", content: 'Samantha said: "Tell me more."' },
        { role: "user", name: "kev", content: `kev said: "${text}"`, metadata: { perceptionId: "p2" } },
      ],
    });
    const output = await withModel(model, () => runIsm({ workingMemory: memory, goal: "Help kev.", playbook: "Think, then respond.", actions }));
    expect(output.outcome).toBe("done");
    expect(model.requests).toHaveLength(4);
    for (const request of model.requests) {
      const users = request.messages.filter((m) => m.role === "user");
      expect(users).toHaveLength(2);
      expect(fencedUserText(users[0].content)).toBe(neutralizeTags(`kev: ${text}`));
      expect(fencedUserText(users[1].content)).toBe(neutralizeTags(`kev said: "${text}"`));
      for (const m of users) {
        expect(m.content.split(UNTRUSTED_NOTICE)).toHaveLength(2);
        expect(m.name).toBeUndefined();
      }
      // No tag of the user's is live anywhere in what the ISM sent.
      expect(parseTaggedAnswer(request.messages.map((m) => m.content).join("\n"))).toEqual([]);
    }
  });
});
