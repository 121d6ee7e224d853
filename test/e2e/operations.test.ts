/**
 * Operations from the real `ensoul` binary: `--log-level` (JSON lines on stderr when it is not
 * a terminal, each turn's line with the soul and its trace) and `ensoul up --metrics`
 * (Prometheus text at /metrics on 127.0.0.1), with one-line errors for bad values.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runEnsoul, startEnsoul } from "../support/cli/runEnsoul.ts";
import { tempDirs } from "../support/tempDirs.ts";

const dirs = tempDirs("ensoul-operations-");
afterEach(() => dirs.cleanup());

describe("ensoul's operations flags", () => {
  it("--log-level debug: the demo's turns are JSON lines on stderr, with the soul and the turn's trace", async () => {
    const result = await runEnsoul(["demo", "--data", dirs.make(), "--user", "Tom", "--log-level", "debug"], { lines: ["Hello, I'm Tom."], env: { USER: "tom" } });
    expect(result.code).toBe(0);
    const records = result.stderr.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.find((r) => r.level === "debug" && r.soul === "claudius" && r.trace === "claudius:1" && /^soul claudius: turn 1 done in /.test(String(r.msg)))).toMatchObject({ node: "local" });
  });

  it("a bad --log-level or ENSOUL_LOG_LEVEL is one line and exit 2", async () => {
    const flag = await runEnsoul(["status", "--log-level", "loud"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe("ensoul: --log-level must be one of fatal, error, warn, info, debug, trace, silent; got 'loud'\n");
    const env = await runEnsoul(["status"], { env: { ENSOUL_LOG_LEVEL: "loud" } });
    expect(env.code).toBe(2);
    expect(env.stderr).toBe("ensoul: ENSOUL_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got 'loud'\n");
  });

  it("ensoul up --metrics serves Prometheus text on 127.0.0.1 until the node stops", async () => {
    const dir = dirs.make();
    const config = join(dir, "ensoul.yaml");
    writeFileSync(config, "cluster: watched\nsouls:\n  - { id: sam, blueprint: samantha }\n");
    const up = startEnsoul(["up", config, "--data", join(dir, "data"), "--status", "lines", "--metrics", "127.0.0.1:0"], { timeoutMs: 60_000 });
    await up.waitFor(/ensoul up: ready/);
    const url = /ensoul up: metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)\n/.exec(up.stdout())?.[1];
    expect(url).toBeDefined();
    const text = await (await fetch(url!)).text();
    expect(text).toContain('ensoul_node_info{node="local",cluster="watched"} 1');
    expect(text).toContain('ensoul_souls{status="passivated"} 1');
    expect(text).toContain("# TYPE ensoul_turn_duration_seconds histogram");
    up.child.kill("SIGINT");
    const result = await up.exited;
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    await expect(fetch(url!)).rejects.toThrow();
  });

  it("a bad --metrics is one line and exit 2, before anything starts", async () => {
    const result = await runEnsoul(["up", "examples/cluster.yaml", "--metrics", "http://0.0.0.0:9464"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("ensoul: --metrics takes a port (0-65535) or host:port, e.g. 9464 or 0.0.0.0:9464; got 'http://0.0.0.0:9464'\n");
  });
});
