/**
 * The terminal side of `ensoul chat` (bridges/terminal): what happens to a line the person sent
 * when the chat is told to stop (Ctrl-C read as a key, SIGINT, SIGTERM). A line sent before the
 * stop is answered when it is the next one; lines waiting behind the one being answered are
 * named as not sent; nothing is dropped without a word.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runTerminalChat, type ChatTurn } from "../../../bridges/terminal/index.ts";
import { deferred } from "../../support/soul/helpers.ts";

function terminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = "";
  output.on("data", (d: Buffer) => (printed += d.toString()));
  return { input, output, printed: () => printed };
}

describe("the terminal chat stopping", () => {
  it("Ctrl-C right after Enter: the line just sent is answered before the chat ends", async () => {
    const t = terminal();
    const stop = new AbortController();
    const heard: string[] = [];
    const turn: ChatTurn = async (text, say) => {
      heard.push(text);
      say.final("p1", "Soul", `echo: ${text}`);
    };
    const chat = runTerminalChat({ turn, input: t.input, output: t.output, interactive: true, stop: stop.signal, onInterrupt: () => stop.abort("SIGINT") });
    // Enter, then Ctrl-C, in one read from the terminal: as fast as a person can type them.
    t.input.write("hello\r\x03");
    expect(await chat).toEqual({ turns: 1 });
    expect(heard).toEqual(["hello"]);
    expect(t.printed()).toContain("Soul: echo: hello");
  });

  it("a stop while a line is answered finishes it; lines sent behind it are named as not sent", async () => {
    const t = terminal();
    const stop = new AbortController();
    const started = deferred();
    const finish = deferred();
    const heard: string[] = [];
    const turn: ChatTurn = async (text, say) => {
      heard.push(text);
      started.resolve();
      await finish.promise;
      say.final("p1", "Soul", `echo: ${text}`);
    };
    const chat = runTerminalChat({ turn, input: t.input, output: t.output, interactive: false, stop: stop.signal });
    t.input.write("one\ntwo\nthree\n");
    await started.promise;
    stop.abort("SIGTERM");
    finish.resolve();
    expect(await chat).toEqual({ turns: 1 });
    expect(heard).toEqual(["one"]);
    expect(t.printed()).toContain("Soul: echo: one");
    expect(t.printed()).toMatch(/not sent.*"two".*"three"/);
  });

  it("without a stop, every line piped in is answered, in order, up to the end of input", async () => {
    const t = terminal();
    const heard: string[] = [];
    const chat = runTerminalChat({ turn: async (text) => void heard.push(text), input: t.input, output: t.output, interactive: false });
    t.input.end("one\n\ntwo\nthree");
    expect(await chat).toEqual({ turns: 3 });
    expect(heard).toEqual(["one", "two", "three"]);
    expect(t.printed()).not.toMatch(/not sent/);
  });
});
