/**
 * The terminal bridge: a person at a terminal talking to a soul (`ensoul chat`, on the
 * in-process bus or over NATS). The CLI wires it to the soul; this file is the terminal side.
 */
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";

/** Sends one line to the soul; `say` is called for every piece of speech as it streams. */
export type ChatTurn = (text: string, say: ChatSpeech) => Promise<void>;

export interface ChatSpeech {
  /** A streamed chunk of the speech with this id. */
  chunk(id: string, speaker: string, text: string): void;
  /** The whole speech, once final (after the gates). */
  final(id: string, speaker: string, text: string): void;
}

export interface TerminalChatOptions {
  turn: ChatTurn;
  input?: Readable;
  output?: Writable;
  /** Interactive (prompt, live streaming) or scripted (one answer per input line). */
  interactive?: boolean;
  /** Printed once before the first prompt. */
  banner?: string;
  /**
   * Aborted to end the chat: the line being answered is finished, nothing after it is read.
   * Without it, the chat ends at end of input (or `/quit`).
   */
  stop?: AbortSignal;
  /** Ctrl-C read as a key on a terminal (raw mode); without it, readline's own: the chat ends. */
  onInterrupt?: () => void;
}

/**
 * The terminal side of `ensoul chat`. Interactive sessions stream speech as it is produced;
 * piped input gets each final answer on its own line and ends cleanly at end of input, so
 * scripts and CI can drive a soul. Once the input has closed (end of input, Ctrl-D, a stop)
 * there is no prompt again: prompting resumes the input, which would keep the process alive.
 */
export async function runTerminalChat(options: TerminalChatOptions): Promise<{ turns: number }> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const interactive = options.interactive ?? Boolean((input as { isTTY?: boolean }).isTTY);
  const write = (s: string) => output.write(s);
  if (options.banner) write(`${options.banner}\n`);

  const rl = createInterface({ input, output: interactive ? output : undefined, terminal: interactive });
  let closed = false;
  rl.once("close", () => (closed = true));
  const prompt = () => interactive && !closed && rl.prompt();
  rl.setPrompt("you> ");
  if (options.onInterrupt) rl.on("SIGINT", options.onInterrupt);
  const stop = options.stop;
  const onStop = () => rl.close();
  if (stop?.aborted) rl.close();
  stop?.addEventListener("abort", onStop, { once: true });
  prompt();

  let turns = 0;
  const streamed = new Set<string>();
  const sink: ChatSpeech = {
    chunk(id, speaker, text) {
      if (!interactive) return;
      if (!streamed.has(id)) {
        streamed.add(id);
        write(`${speaker}: `);
      }
      write(text);
    },
    final(id, speaker, text) {
      if (interactive && streamed.has(id)) {
        write("\n");
        return;
      }
      write(`${speaker}: ${text}\n`);
    },
  };

  for await (const raw of rl) {
    // Lines typed or piped after a stop are not answered.
    if (stop?.aborted) break;
    const line = raw.trim();
    if (line === "") {
      prompt();
      continue;
    }
    if (interactive && (line === "/quit" || line === "/exit")) break;
    if (!interactive) write(`you> ${line}\n`);
    try {
      await options.turn(line, sink);
    } catch (e) {
      write(`! ${(e as Error).message}\n`);
    }
    turns++;
    prompt();
  }
  stop?.removeEventListener("abort", onStop);
  rl.close();
  return { turns };
}
