/**
 * A soul run with `inspect`: its inspection events (the soul, its process states, the ISM it
 * deliberates with) reach a local WebSocket receiver, directly (`ws` mode) or through
 * @statelyai/inspect's `createInspectorServer` relay (`server` mode), sanitized on the way,
 * and nothing is left holding the process open once the soul and the inspection stop.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { createInspection, type Inspection } from "../../../runtime/inspect/inspection.ts";
import { createSoul } from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { record, said, until } from "../../support/soul/helpers.ts";
import { ismSoul } from "../../support/soul/ismSoul.ts";
import { choose, scriptedCognition, scriptedModel } from "../../support/soul/scriptedModel.ts";

/** One inspection event as it arrives on the wire (the Stately inspector protocol). */
interface WireEvent {
  type: "@xstate.actor" | "@xstate.snapshot" | "@xstate.event";
  sessionId: string;
  rootId?: string;
  parentId?: string;
  name?: string;
  definition?: string;
  snapshot?: { value?: unknown; context?: Record<string, unknown>; status?: string };
  event?: { type: string; [field: string]: unknown };
}

const SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";

const env = useTestEnv();

function collect(socket: WebSocket, into: WireEvent[]): void {
  socket.on("message", (data) => into.push(JSON.parse(data.toString()) as WireEvent));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const opened = (socket: WebSocket) => new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
const tcpSockets = () => process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap").length;

/**
 * Greets, then deliberates: Think, then Respond. The first perception carries a credential in
 * its meta, as a careless bridge might send it; it must not reach the inspector.
 */
async function converse(inspection: Inspection) {
  const model = scriptedModel({
    dialog: ["Hi, what is broken?", "Clear the cache."],
    choice: [choose(["Think"]), choose(["Respond"])],
    monologue: ["A stale cache, probably."],
  });
  const soul = createSoul({ blueprint: ismSoul(), id: "sam", store: env.actor("sam"), cognition: scriptedCognition(model), inspect: inspection.inspect });
  const log = record(soul);
  await soul.perceive({ ...said("hello"), meta: { apiKey: SECRET } });
  await soul.idle();
  await soul.perceive(said("my build fails"));
  await soul.idle();
  await soul.stop();
  expect(log.said()).toEqual(["Hi, what is broken?", "Clear the cache."]);
  return soul;
}

/** What every receiver must have seen of that conversation. */
function expectConversation(received: WireEvent[], soulSession: string): void {
  // The soul actor, registered with its machine's definition.
  const soulActor = received.find((e) => e.type === "@xstate.actor" && e.sessionId === soulSession);
  expect(soulActor?.name).toBe("sam");
  expect(soulActor?.definition).toContain('"id":"soul"');
  expect(soulActor?.definition).toContain('"src":"ism"');

  // Its snapshots walk the process states: greeting, then the ISM process's phases.
  const values = received.filter((e) => e.type === "@xstate.snapshot" && e.sessionId === soulSession).map((e) => JSON.stringify(e.snapshot?.value));
  const order = [
    { greeting: "idle" },
    { greeting: "running" },
    { problemSolving: "idle" },
    { problemSolving: { running: "preparing" } },
    { problemSolving: { running: "ism" } },
    { problemSolving: { running: "finishing" } },
  ].map((v) => values.indexOf(JSON.stringify(v)));
  expect(order.every((i) => i >= 0)).toBe(true);
  expect([...order].sort((a, b) => a - b)).toEqual(order);

  // The ISM: a child of the soul, in the soul's system, deliberating through its own states.
  const ism = received.find((e) => e.type === "@xstate.actor" && e.name === "ism");
  expect(ism?.parentId).toBe(soulSession);
  expect(ism?.rootId).toBe(soulSession);
  expect(ism?.definition).toContain('"id":"ism"');
  const ismValues = received.filter((e) => e.type === "@xstate.snapshot" && e.sessionId === ism?.sessionId).map((e) => e.snapshot?.value);
  expect(ismValues).toEqual(expect.arrayContaining(["selecting", "acting", "done"]));
  const last = received.filter((e) => e.type === "@xstate.snapshot" && e.sessionId === ism?.sessionId).at(-1);
  expect(last?.snapshot?.context?.["decisions"]).toHaveLength(2);
  // The ISM's turn is shown as what it is, not as the soul runtime behind it.
  expect(last?.snapshot?.context?.["scope"]).toMatchObject({ turn: { soulId: "sam", process: "problemSolving", kind: "process" } });
  // The soul is told when its ISM is done.
  expect(received.some((e) => e.type === "@xstate.event" && e.sessionId === soulSession && e.event?.type === "xstate.done.actor.ism")).toBe(true);

  // Sanitized: the key in the perception's meta never left the process, in any event.
  const perceive = received.find((e) => e.type === "@xstate.event" && e.event?.type === "PERCEIVE");
  expect(perceive?.event?.["perception"]).toMatchObject({ content: "hello", meta: { apiKey: "[redacted]" } });
  expect(JSON.stringify(received)).not.toContain("abcdefghijklmnopqrstuvwxyz");
}

describe("inspecting a soul over WebSocket", () => {
  it("ws mode: the soul, its process states and its ISM child reach a local receiver", async () => {
    const baseline = tcpSockets();
    const receiver = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => receiver.once("listening", resolve));
    const received: WireEvent[] = [];
    receiver.on("connection", (socket) => collect(socket, received));
    const url = `ws://127.0.0.1:${(receiver.address() as { port: number }).port}`;

    const inspection = createInspection({ mode: "ws", url });
    await inspection.ready();
    const soul = await converse(inspection);
    await inspection.stop();

    await until(() => received.some((e) => e.type === "@xstate.snapshot" && e.sessionId === soul.actor.sessionId && e.snapshot?.value === "stopped"));
    expectConversation(received, soul.actor.sessionId);

    // Stopping closed the inspector's socket: the receiver sees it go, and no socket is left.
    await until(() => receiver.clients.size === 0);
    await new Promise((resolve) => receiver.close(resolve));
    await until(() => tcpSockets() <= baseline);
  });

  it("server mode: the createInspectorServer relay forwards every event to a client listening to it", async () => {
    const port = await freePort();
    const inspection = createInspection({ mode: "server", port });
    expect(inspection.url).toBe(`http://localhost:${port}`);
    // The relay serves the page that embeds the Stately inspector.
    const page = await fetch(`http://127.0.0.1:${port}/`).then((r) => r.text());
    expect(page).toContain("Stately Inspector");

    const listener = new WebSocket(`ws://127.0.0.1:${port}`);
    const received: WireEvent[] = [];
    collect(listener, received);
    await opened(listener);
    await inspection.ready();

    const soul = await converse(inspection);
    await until(() => received.some((e) => e.type === "@xstate.snapshot" && e.sessionId === soul.actor.sessionId && e.snapshot?.value === "stopped"));
    expectConversation(received, soul.actor.sessionId);

    listener.close();
    await new Promise((resolve) => listener.once("close", resolve));
    await inspection.stop();
    // The relay is gone with it.
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });
});

describe("the inspector never holds a process open", () => {
  const child = fileURLToPath(new URL("../../support/soul/inspectedChild.ts", import.meta.url));

  /** Runs the child and resolves with its exit code and output; fails if it has not exited in time. */
  function runChild(url: string, how: "forget" | "stop"): Promise<{ code: number | null; out: string }> {
    return new Promise((resolve, reject) => {
      const proc = spawn(process.execPath, ["--import", "tsx", child, url, how], { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
      proc.stderr.on("data", (d: Buffer) => (out += d.toString()));
      const timer = setTimeout(() => {
        proc.kill("SIGKILL");
        reject(new Error(`the inspected process did not exit on its own (${how}): ${out}`));
      }, 15_000);
      proc.on("exit", (code) => {
        clearTimeout(timer);
        resolve({ code, out });
      });
    });
  }

  it("exits when the soul has stopped, even with the inspection left connected", async () => {
    const receiver = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => receiver.once("listening", resolve));
    const received: WireEvent[] = [];
    receiver.on("connection", (socket) => collect(socket, received));
    const { code, out } = await runChild(`ws://127.0.0.1:${(receiver.address() as { port: number }).port}`, "forget");
    expect(out).toContain("done");
    expect(code).toBe(0);
    expect(received.some((e) => e.type === "@xstate.actor" && e.name === "child")).toBe(true);
    for (const socket of receiver.clients) socket.terminate();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it("exits after stop() while the socket is still trying to connect (no receiver there)", async () => {
    const { code, out } = await runChild(`ws://127.0.0.1:${await freePort()}`, "stop");
    expect(out).toContain("done");
    expect(code).toBe(0);
  });
});
