import { createInProcessOutlet, createSoul, failedTurnLine, type TurnFailure } from "../../actors/soul/index.ts";
import { defaultSoulId } from "../../souls/index.ts";
import type { CognitionContext } from "../cognition/index.ts";
import type { Inspection } from "../inspect/index.ts";
import { rootLogger } from "../log/index.ts";
import { createSoulLog, LOCAL_NODE, nodeDataDir } from "../node/index.ts";
import { createDefaultRegistry, defaultModelName } from "../providers/index.ts";
import { openStore } from "../store/index.ts";
import { soulToChat } from "./chatSoul.ts";
import { inspectTarget, openInspection } from "./inspectFlag.ts";
import { watchShutdown } from "./shutdown.ts";
import { runTerminalChat } from "../../bridges/terminal/index.ts";

export interface ChatCommandOptions {
  soul?: string;
  model?: string;
  data: string;
  user: string;
  inspect?: string | boolean;
  env?: NodeJS.ProcessEnv;
}

/** Describes where the words come from, without ever showing a key. */
export function modelBanner(model: string): string {
  return model.startsWith("offline:")
    ? `${model} (the offline model: no ANTHROPIC_API_KEY or GROQ_API_KEY is set)`
    : model;
}

/**
 * `ensoul chat`: one soul in this process, on the in-process outlet, with its memory in LMDB,
 * so the conversation continues where it left off the next time. The LMDB is the local
 * node's (`<data>/local`, dataDirectory.ts): the demo's Claudius is the one this chat meets.
 */
export async function chatCommand(options: ChatCommandOptions): Promise<void> {
  const env = options.env ?? process.env;
  const { id: soulId, blueprint } = await soulToChat(options.soul ?? defaultSoulId, options.data);
  const registry = createDefaultRegistry(env);
  const defaultModel = options.model ?? blueprint.models.default ?? defaultModelName(env);
  registry.resolve(defaultModel); // a bad --model fails here, before the chat starts
  const cognition: CognitionContext = { registry, defaultModel };

  const target = inspectTarget(options.inspect);
  const inspection: Inspection | undefined = target ? await openInspection(target) : undefined;

  const path = nodeDataDir(options.data, LOCAL_NODE);
  const store = openStore({ path });
  const outlet = createInProcessOutlet();
  // The soul's lines in the log, as a node's are (a failed turn a warning, every turn at debug).
  const soul = createSoul({ blueprint, id: soulId, store, outlet, cognition, inspect: inspection?.inspect, onEvent: createSoulLog(rootLogger()) });
  const shutdown = watchShutdown({ command: "chat", finishing: "finishing the turn…" });
  const stopAll = async () => {
    try {
      await soul.stop();
    } finally {
      await inspection?.stop();
      await store.close();
    }
  };

  try {
    await runTerminalChat({
      stop: shutdown.signal,
      onInterrupt: () => shutdown.interrupt("SIGINT"),
      banner: `${blueprint.name} · ${modelBanner(defaultModel)} · memory in ${path}${
        inspection?.url ? ` · inspector at ${inspection.url}` : ""
      }`,
      turn: async (text, say) => {
        const offSpeech = outlet.onProposal((p) => {
          if (p.kind === "speak") say.final(p.id, blueprint.name, p.content);
        });
        const offChunk = outlet.onChunk((c) => say.chunk(c.proposalId, blueprint.name, c.text));
        // A turn that fails says why, in one line (the chat prints a thrown error as `! <message>`).
        const failures = new Map<string, TurnFailure>();
        const offFailed = soul.onEvent((e) => {
          if (e.type === "error" && e.phase === "process" && e.perceptionId !== undefined) failures.set(e.perceptionId, e);
        });
        try {
          const { id } = await soul.perceive({ action: "said", content: text, name: options.user });
          await soul.idle();
          const failure = failures.get(id);
          if (failure) throw new Error(failedTurnLine(blueprint.name, failure));
        } finally {
          offSpeech();
          offChunk();
          offFailed();
        }
      },
    });
  } finally {
    try {
      await stopAll();
    } finally {
      shutdown.dispose();
    }
  }
}
