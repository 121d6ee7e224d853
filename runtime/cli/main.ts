import { Command, CommanderError } from "commander";
import { chatCommand } from "./chatCommand.ts";
import { CliError } from "./CliError.ts";

/**
 * The `ensoul` command. Each subcommand lives in its own file; this one only wires them to
 * commander and turns failures into one clear line.
 */
const program = new Command()
  .name("ensoul")
  .description("An actor runtime for AI souls")
  .showHelpAfterError()
  .exitOverride();

program
  .command("chat")
  .description("talk with a soul in this terminal (piped stdin: one answer per line, then exit)")
  .argument("[soul]", "which soul (default: samantha)")
  .option("-m, --model <provider:model>", "the model for every step, e.g. groq:llama-3.1-8b-instant")
  .option("-d, --data <dir>", "LMDB data directory", "./.ensoul")
  .option("-u, --user <name>", "your name, as the soul perceives it", process.env.USER || "user")
  .option("--inspect [port|ws-url]", "stream the soul's machines to the Stately inspector")
  .action(async (soul: string | undefined, opts: { model?: string; data: string; user: string; inspect?: string | boolean }) => {
    await chatCommand({ soul, ...opts });
  });

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    process.exitCode = e.exitCode;
  } else {
    // One line, no stack: the messages are written to stand alone.
    process.stderr.write(`ensoul: ${(e as Error).message}\n`);
    process.exitCode = e instanceof CliError ? e.exitCode : 1;
  }
}
