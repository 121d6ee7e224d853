/**
 * One naming for the NATS credentials on every command: `--nats-user` and `--nats-pass` (or
 * ENSOUL_NATS_USER and ENSOUL_NATS_PASS), `--token`, `--creds`, `--nkey-seed-file`. The old
 * `--user`/`--pass` of the cluster commands still work, with one deprecation note on stderr
 * that names the flags and never their values; `--help` shows only the one naming. On
 * `ensoul chat` and `ensoul memory`, `--user` is a person and never reaches NATS.
 */
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { natsOptionsFrom, withNatsOptions, type NatsFlags } from "../../../runtime/cli/natsOptions.ts";

const URL = "nats://127.0.0.1:4222";
const SECRET = "s3cret-Horse-42";

/** The flags a command parses, as commander gives them to its action. */
function parsed(args: string[], opts: Parameters<typeof withNatsOptions>[1] = {}): NatsFlags {
  const command = withNatsOptions(new Command("status").exitOverride(), opts);
  command.parse(args, { from: "user" });
  return command.opts<NatsFlags>();
}

function notes(): { warn: (line: string) => void; lines: string[] } {
  const lines: string[] = [];
  return { warn: (line) => void lines.push(line), lines };
}

describe("the NATS credential flags", () => {
  it("--nats-user and --nats-pass are the user and password on a cluster command; --help shows them and not --user/--pass", () => {
    const help = withNatsOptions(new Command("status")).helpInformation();
    expect(help).toMatch(/--nats-user <name>\s+NATS user \(env ENSOUL_NATS_USER\)/);
    expect(help).toMatch(/--nats-pass <password>/);
    expect(help).not.toMatch(/--user\b/);
    expect(help).not.toMatch(/--pass\b/);
    const said = notes();
    const nats = natsOptionsFrom(parsed(["--nats", URL, "--nats-user", "alice"]), { ENSOUL_NATS_PASS: SECRET }, { warn: said.warn });
    expect(nats).toMatchObject({ servers: URL, user: "alice", pass: SECRET });
    expect(said.lines).toEqual([]);
  });

  it("the old --user and --pass still work, with one deprecation note that never shows the password", () => {
    const said = notes();
    const nats = natsOptionsFrom(parsed(["--nats", URL, "--user", "alice", "--pass", SECRET]), {}, { warn: said.warn });
    expect(nats).toMatchObject({ user: "alice", pass: SECRET });
    const deprecation = said.lines.filter((l) => /deprecated/.test(l));
    expect(deprecation).toEqual(["--user and --pass are deprecated names for the NATS user and password: use --nats-user and --nats-pass (or ENSOUL_NATS_USER and ENSOUL_NATS_PASS)"]);
    for (const line of said.lines) expect(line).not.toContain(SECRET);
    // The password on the command line is still called out, by the flag that carried it.
    expect(said.lines).toContainEqual(expect.stringMatching(/^--pass puts the NATS password on the command line/));
    // Once per process: a second read of the same flags does not say it again.
    natsOptionsFrom(parsed(["--nats", URL, "--user", "alice"]), {}, { warn: said.warn });
    expect(said.lines.filter((l) => /deprecated/.test(l))).toHaveLength(1);
  });

  it("a user given both ways must agree; one way to authenticate is named with the one spelling", () => {
    expect(() => natsOptionsFrom(parsed(["--nats", URL, "--user", "alice", "--nats-user", "bob"]), {}, { warn: () => undefined })).toThrow(
      "--user is the deprecated name of --nats-user, and they disagree: give --nats-user only",
    );
    expect(() => natsOptionsFrom(parsed(["--nats", URL, "--nats-user", "alice", "--token", "t0ken"]), {}, { warn: () => undefined })).toThrow(
      "give one way to authenticate to NATS: --nats-user/--nats-pass, --token, --creds or --nkey-seed-file",
    );
  });

  it("on a command whose --user is a person (chat, memory), --user never reaches NATS and --nats-user does", () => {
    const command = withNatsOptions(new Command("chat").option("-u, --user <name>", "you").exitOverride(), { personUser: true });
    command.parse(["--nats", URL, "--user", "Tom", "--nats-user", "ada-term"], { from: "user" });
    const said = notes();
    expect(natsOptionsFrom(command.opts<NatsFlags>(), {}, { personUser: true, warn: said.warn })).toMatchObject({ user: "ada-term" });
    const nats = natsOptionsFrom({ nats: URL, user: "Tom" }, {}, { personUser: true, warn: said.warn });
    expect(nats?.user).toBeUndefined();
    expect(said.lines).toEqual([]);
    expect(command.helpInformation()).not.toMatch(/--pass\b/);
  });
});
