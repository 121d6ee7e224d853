import { createServer, type Server } from "node:net";
import { describe, expect, it } from "vitest";
import { CliError } from "../../../runtime/cli/CliError.ts";
import { inspectTarget, openInspection } from "../../../runtime/cli/inspectFlag.ts";

describe("--inspect [port|ws-url]", () => {
  it("is no inspection when the flag is not given", () => {
    expect(inspectTarget(undefined)).toBeUndefined();
    expect(inspectTarget(false)).toBeUndefined();
  });

  it("alone starts the local relay on port 8080", () => {
    expect(inspectTarget(true)).toEqual({ mode: "server", port: 8080 });
  });

  it("with a number starts the local relay on that port", () => {
    expect(inspectTarget("9123")).toEqual({ mode: "server", port: 9123 });
    expect(inspectTarget("1")).toEqual({ mode: "server", port: 1 });
    expect(inspectTarget("65535")).toEqual({ mode: "server", port: 65535 });
  });

  it("with a ws:// or wss:// URL sends to the relay there", () => {
    expect(inspectTarget("ws://127.0.0.1:4242")).toEqual({ mode: "ws", url: "ws://127.0.0.1:4242" });
    expect(inspectTarget("wss://inspect.example.org/relay")).toEqual({ mode: "ws", url: "wss://inspect.example.org/relay" });
  });

  it.each(["0", "65536", "-1", "80.5", "abc", "", "http://localhost:8080", "ws://", "cluster.yaml", "websocket"])(
    "rejects '%s' as a usage error, naming what it takes",
    (value) => {
      let error: unknown;
      try {
        inspectTarget(value);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode).toBe(2);
      expect((error as CliError).message).toBe(
        `--inspect takes a port (1-65535) or a ws:// or wss:// URL, got '${value}' (give other arguments before a bare --inspect)`,
      );
    },
  );

  it("refuses a relay port already in use with a clear error, and opens the relay on a free one", async () => {
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, resolve));
    const { port } = squatter.address() as { port: number };
    try {
      await expect(openInspection({ mode: "server", port })).rejects.toThrow(
        new CliError(`--inspect: port ${port} is in use; give another port, or the ws:// URL of the inspector relay already running there`),
      );
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
    // The same port, free again: the relay starts there and serves its page.
    const inspection = await openInspection({ mode: "server", port });
    try {
      expect(inspection.url).toBe(`http://localhost:${port}`);
      const page = await fetch(inspection.url as string);
      expect(page.status).toBe(200);
    } finally {
      await inspection.stop();
    }
  });
});
