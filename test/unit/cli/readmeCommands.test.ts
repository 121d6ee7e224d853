/**
 * The README's command lines against the CLI: a command that only talks to a running cluster
 * (the CLI refuses it without --nats) is never shown without --nats, so a newcomer who copies
 * a line does not get "give --nats <url>" back.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..", "..");
const readme = readFileSync(join(root, "README.md"), "utf8");
const main = readFileSync(join(root, "runtime", "cli", "main.ts"), "utf8");

/** The commands whose action starts with `requireNats(opts, "<command>")`. */
const natsOnly = [...main.matchAll(/requireNats\(opts, "([a-z-]+)"\)/g)].map((m) => m[1] as string);

/** Every `ensoul <command> ...` line inside the README's sh blocks. */
const lines = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
  .flatMap((m) => (m[1] as string).split("\n"))
  .map((l) => l.replace(/\s+#.*$/, "").trim())
  .filter((l) => /(^|\s)(npx )?ensoul \S/.test(l));

describe("the README's command lines", () => {
  it("finds the commands that need a cluster, and lines that run them", () => {
    expect(natsOnly).toEqual(expect.arrayContaining(["whisper", "status", "daimon", "stop"]));
    for (const command of natsOnly) expect(lines.some((l) => l.includes(`ensoul ${command} `))).toBe(true);
  });

  it.each(natsOnly)("every line running `ensoul %s` gives --nats", (command) => {
    const running = lines.filter((l) => new RegExp(`ensoul ${command}( |$)`).test(l));
    expect(running.filter((l) => !/ --nats /.test(`${l} `))).toEqual([]);
  });
});
