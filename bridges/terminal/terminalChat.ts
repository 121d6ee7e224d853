/**
 * The terminal bridge: a person at a terminal talking to a soul (`ensoul chat`, on the
 * in-process bus or over NATS). The CLI wires it to the soul; this file is the terminal side.
 */
import { createInterface, type Interface } from "node:readline";
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
   * Aborted to end the chat: the line being answered is finished (or, with none under way, the
   * line sent just before the stop is answered), nothing after it is read, and lines sent behind
   * it are named as not sent. Without it, the chat ends at end of input (or `/quit`).
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
  const lines = sentLines(rl);
  const prompt = () => interactive && !lines.closed && rl.prompt();
  rl.setPrompt("you> ");
  if (options.onInterrupt) rl.on("SIGINT", options.onInterrupt);
  const stop = options.stop;
  let answering = false;
  // A stop finishes the line being answered; with none under way, the line sent last before
  // it is the one being answered (its turn just has not begun). Lines sent behind it are not
  // sent to the soul, and the person is told which.
  let unsent: string[] = [];
  const onStop = () => {
    unsent = lines.takeFrom(answering ? 0 : 1);
    rl.close();
  };
  if (stop?.aborted) onStop();
  stop?.addEventListener("abort", onStop, { once: true });
  prompt();

  let turns = 0;
  const sink = speechSink(write, interactive);
  for (let raw = await lines.next(); raw !== undefined; raw = await lines.next()) {
    const line = raw.trim();
    if (line === "") {
      prompt();
      continue;
    }
    if (interactive && (line === "/quit" || line === "/exit")) break;
    if (!interactive) write(`you> ${line}\n`);
    answering = true;
    try {
      await options.turn(line, sink);
    } catch (e) {
      write(`! ${(e as Error).message}\n`);
    } finally {
      answering = false;
    }
    turns++;
    if (stop?.aborted) break;
    prompt();
  }
  const notSent = unsent.map((l) => l.trim()).filter((l) => l !== "");
  if (notSent.length > 0) write(`! not sent, the chat was stopping: ${notSent.map((l) => JSON.stringify(l)).join(", ")}\n`);
  stop?.removeEventListener("abort", onStop);
  rl.close();
  return { turns };
}

/**
 * The lines the person sent, in order, as readline emits them: a line is here the moment Enter
 * is read, even when a stop comes in the same read from the terminal (Ctrl-C right after
 * Enter), so the stop can tell which lines were sent. `next` resolves undefined once the input
 * has closed and every line is taken.
 */
function sentLines(rl: Interface) {
  const lines: string[] = [];
  let closed = false;
  let wake: (() => void) | undefined;
  const woken = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  rl.on("line", (line) => (lines.push(line), woken()));
  rl.once("close", () => ((closed = true), woken()));
  return {
    get closed() {
      return closed;
    },
    async next(): Promise<string | undefined> {
      while (lines.length === 0 && !closed) await new Promise<void>((resolve) => (wake = resolve));
      return lines.shift();
    },
    /** Removes and returns the lines waiting from the `index`-th on. */
    takeFrom(index: number): string[] {
      return lines.splice(index);
    },
  };
}

/** Interactive: chunks streamed as they come, the final ends the line; piped: each final on its own line. */
function speechSink(write: (s: string) => void, interactive: boolean): ChatSpeech {
  const streamed = new Set<string>();
  return {
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
}
