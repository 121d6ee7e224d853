/**
 * The runtime's log (runtime/log): pino's levels, JSON lines for machines, the old readable
 * lines for a person at a terminal, and no credential in either, whatever a line quotes.
 */
import { describe, expect, it } from "vitest";
import { createLogger, lineLogger, parseLogLevel, readableLine, type LogTarget } from "../../../runtime/log/index.ts";

function collect(tty = false): LogTarget & { lines: string[] } {
  const lines: string[] = [];
  return { lines, isTTY: tty, write: (text: string) => void lines.push(text) };
}

const KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";

describe("the runtime's log", () => {
  it("writes JSON lines off a terminal: level names, time, the node, the soul and the turn's trace", () => {
    const target = collect(false);
    const node = createLogger({ target, env: {} }).child({ node: "local" });
    node.child({ soul: "sam" }).warn({ trace: "sam:3" }, "soul sam: process failed in main: boom");
    expect(target.lines).toHaveLength(1);
    const record = JSON.parse(target.lines[0]) as Record<string, unknown>;
    expect(record).toMatchObject({ level: "warn", node: "local", soul: "sam", trace: "sam:3", msg: "soul sam: process failed in main: boom" });
    expect(new Date(String(record.time)).getTime()).toBeGreaterThan(0);
  });

  it("writes the readable line a terminal always showed, with the context after it", () => {
    const target = collect(true);
    const logger = createLogger({ target, env: {}, level: "debug" });
    logger.child({ node: "local" }).warn("bridge http-sam not started: port in use");
    logger.child({ node: "local" }).child({ soul: "sam" }).debug({ trace: "sam:3", durationMs: 12 }, "soul sam: turn 3 done in main");
    logger.child({ component: "bus" }).error("handler error in subscription on a.b: boom");
    expect(target.lines).toEqual([
      "[ensoul local] bridge http-sam not started: port in use\n",
      "[ensoul local] debug: soul sam: turn 3 done in main soul=sam trace=sam:3 durationMs=12\n",
      "[ensoul bus] handler error in subscription on a.b: boom\n",
    ]);
  });

  it("redacts credentials in messages, fields and errors, in both formats", () => {
    for (const tty of [false, true]) {
      const target = collect(tty);
      const logger = createLogger({ target, env: {} });
      logger.error({ url: "nats://ada:s3cret-pw@nats.example:4222", err: new Error(`upstream rejected ${KEY}`) }, `key ${KEY} was refused`);
      const text = target.lines.join("");
      expect(text).not.toContain("s3cret-pw");
      expect(text).not.toContain(KEY);
      expect(text).toContain("[redacted]");
    }
  });

  it("keeps below its level quiet, and takes the level from ENSOUL_LOG_LEVEL", () => {
    const quiet = collect();
    const logger = createLogger({ target: quiet, env: { ENSOUL_LOG_LEVEL: "error" } });
    logger.warn("not shown");
    logger.error("shown");
    expect(quiet.lines.map((l) => JSON.parse(l).msg)).toEqual(["shown"]);

    const chatty = collect();
    createLogger({ target: chatty, env: { ENSOUL_LOG_LEVEL: "debug" } }).debug("a turn");
    expect(chatty.lines).toHaveLength(1);
  });

  it("says once that an ENSOUL_LOG_LEVEL is not a level, and logs at info", () => {
    const target = collect();
    const logger = createLogger({ target, env: { ENSOUL_LOG_LEVEL: "loud" } });
    logger.debug("not shown");
    logger.info("shown");
    expect(target.lines.map((l) => JSON.parse(l).msg)).toEqual([
      "ENSOUL_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got 'loud'; logging at info",
      "shown",
    ]);
  });

  it("takes ENSOUL_LOG_FORMAT over the terminal's guess", () => {
    const target = collect(true);
    createLogger({ target, env: { ENSOUL_LOG_FORMAT: "json" } }).info("plain");
    expect(JSON.parse(target.lines[0])).toMatchObject({ msg: "plain" });
  });

  it("checks a level someone typed, naming where it came from", () => {
    expect(parseLogLevel(" DEBUG ", "--log-level")).toBe("debug");
    expect(() => parseLogLevel("verbose", "--log-level")).toThrow("--log-level must be one of fatal, error, warn, info, debug, trace, silent; got 'verbose'");
  });

  it("hands a line-taking caller the message only, and nothing below info", () => {
    const lines: string[] = [];
    const logger = lineLogger((l) => lines.push(l));
    logger.child({ node: "n1" }).warn(`could not publish: ${KEY}`);
    logger.debug("a turn");
    expect(lines).toEqual(["could not publish: [redacted]"]);
  });

  it("reads a record without the usual fields", () => {
    expect(readableLine({ msg: "hello" })).toBe("[ensoul] hello\n");
    expect(readableLine({ msg: "x", level: "info", note: "two words", n: 2 })).toBe('[ensoul] x note="two words" n=2\n');
  });
});
