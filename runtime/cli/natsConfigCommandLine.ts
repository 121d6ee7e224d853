/**
 * `ensoul nats-config` on the command line. Kept apart from natsConfigCommand.ts so that
 * main.ts can register it without loading the NATS permissions and nkeys: `ensoul --help`
 * should load only what the help shows. The action imports the command when it runs.
 */
import type { Command } from "commander";

function collectValues(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Adds `nats-config` to the `ensoul` program (main.ts calls this once). */
export function registerNatsConfigCommand(program: Command): Command {
  return program
    .command("nats-config")
    .description("print a nats-server config giving each ensoul user the NATS permissions of its role (see docs/SECURITY.md)")
    .option("-c, --cluster <name>", "a cluster (repeat for several; each then gets its own account)", collectValues, [])
    .option(
      "-u, --user <spec>",
      "name:role=<node|bridge|daimon|gate|chat>[:cluster=c][:souls=a,b][:skills=x,y][:tools=t,u][:node=id][:consumers=a,b][:shared=read|write][:speak][:nkey=U...] (repeat)",
      collectValues,
      [],
    )
    .option("--store-dir <dir>", "JetStream store directory")
    .option("-p, --port <port>", "client port")
    .option("--host <host>", "listen address")
    .option("--shared-inbox", "let every user subscribe to _INBOX.> (for clients that cannot set an inbox prefix)")
    .option("--isolation <mode>", "accounts (default with several clusters) or single-account")
    .option("-o, --out <file>", "write the config to this file (mode 0600) instead of stdout")
    .action(async (opts: { cluster: string[]; user: string[]; storeDir?: string; port?: string; host?: string; sharedInbox?: boolean; isolation?: string; out?: string }) => {
      const { natsConfigCommand } = await import("./natsConfigCommand.ts");
      await natsConfigCommand(opts);
    });
}
