/**
 * The debugger's server against a real node on the in-process bus (docs/DEBUGGER.md): the
 * fleet from the heartbeats, the live events, a soul's detail, turns and revert from the node
 * hosting it, and the token on the page and the API.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineSoul, useActions, useSoulMemory, type MentalProcess } from "../../../actors/soul/index.ts";
import { encodeEnvelope, makeEnvelope } from "../../../runtime/bus/index.ts";
import { externalDialog } from "../../../runtime/cognition/index.ts";
import { startDebugger, type DebuggerHandle, type FleetSnapshot } from "../../../runtime/inspect/index.ts";
import { encodeControl, parseClusterConfig, startNode, type EnsoulNode, type NodeStatus } from "../../../runtime/node/index.ts";
import { ModelRegistry } from "../../../runtime/providers/index.ts";
import { openSse } from "../../support/bridges/sse.ts";
import { pause, until } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { countingModel } from "../../support/operations/countingModel.ts";
import { tempDirs } from "../../support/tempDirs.ts";

/** Counts what it heard (soul memory, so a revert shows) and answers through one model step. */
const talk: MentalProcess = async ({ workingMemory }) => {
  const heard = useSoulMemory<number>("heard", 0);
  heard.current += 1;
  const [memory, reply] = await externalDialog(workingMemory, "Answer briefly.", { model: "fake:talk" });
  useActions().speak(reply);
  return memory;
};
const talker = defineSoul({ name: "Talker", persona: "Talks.", initialProcess: talk, processes: { talk } });

const TOKEN = "debug-token-5f1c2e";

describe("the debugger's API on a one-process cluster", () => {
  const dirs = tempDirs();
  let node: EnsoulNode;
  let open: DebuggerHandle;
  let guarded: DebuggerHandle;
  const get = (path: string, init: RequestInit = {}) => fetch(new URL(path, open.url), init);
  const json = async (res: Response) => ({ status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as Record<string, unknown> });
  const fleet = async () => (await (await get("/api/souls")).json()) as FleetSnapshot;
  const turnsOf = async (soul: string) => (await fleet()).souls.find((s) => s.id === soul)?.turns ?? -1;

  beforeAll(async () => {
    const config = parseClusterConfig({
      cluster: "dbg",
      providers: { default: "fake:talk" },
      souls: [{ id: "talker", blueprint: talker }, { id: "other", blueprint: talker }],
      runtime: { heartbeatMs: 100 },
    });
    node = await startNode({ config, data: dirs.make(), store: { noSync: true }, registry: new ModelRegistry().register("fake", countingModel()), log: () => undefined });
    open = await startDebugger({ bus: node.bus, port: 0, nodes: [node.id] });
    guarded = await startDebugger({ bus: node.bus, port: 0, token: TOKEN });
  });
  afterAll(async () => {
    await node?.stop();
    await open?.stop();
    await guarded?.stop();
    dirs.cleanup();
  });

  it("listens on 127.0.0.1 and lists every soul with its node, process and status at once", async () => {
    expect(open.url).toBe(`http://127.0.0.1:${open.port}/`);
    const { status, type, body } = await json(await get("/api/souls"));
    expect(status).toBe(200);
    expect(type).toMatch(/^application\/json/);
    expect(body.cluster).toBe("dbg");
    expect(body.nodes).toEqual([expect.objectContaining({ node: "local", state: "running", bus: "in-process", lastSeen: expect.any(Number) })]);
    const souls = body.souls as FleetSnapshot["souls"];
    expect(souls.map((s) => s.id)).toEqual(["other", "talker"]);
    expect(souls[1]).toMatchObject({ id: "talker", name: "Talker", node: "local", process: "talk", pending: 0, turnsPerMinute: expect.any(Number), tokens: { input: expect.any(Number), output: expect.any(Number) } });
    expect(["active", "passivated"]).toContain(souls[1]?.status);
  });

  it("streams the soul's turn as it happens, and the fleet entry catches up", async () => {
    const sse = await openSse(new URL("/api/events", open.url).href, {});
    try {
      const before = await turnsOf("talker");
      const env = await perceive(node.bus, "talker", "hello debugger");
      const events = await sse.until((all) => all.some((e) => e.event === "soul.turn" && JSON.parse(e.data).data?.perceptionId === env.id), 10_000);
      const turn = JSON.parse(events.find((e) => e.event === "soul.turn")!.data) as Record<string, unknown>;
      expect(turn).toMatchObject({ soulId: "talker", type: "soul.turn", at: expect.any(Number), id: expect.any(String), data: expect.objectContaining({ turn: before + 1, node: "local" }) });
      await until(() => sse.events.some((e) => e.event === "fleet" && JSON.parse(e.data).soul?.turns === before + 1), 5_000, "a fleet event with the new turn count");
      const fleetEvent = JSON.parse(sse.events.find((e) => e.event === "fleet" && JSON.parse(e.data).soul?.turns === before + 1)!.data);
      expect(fleetEvent).toMatchObject({ soulId: "talker", soul: { id: "talker", node: "local" } });
      expect(await turnsOf("talker")).toBe(before + 1);
      const talker = (await fleet()).souls.find((s) => s.id === "talker")!;
      expect(talker.lastTurnAt).toEqual(expect.any(Number));
      expect(talker.tokens).toEqual({ input: 10, output: 5 });
    } finally {
      sse.close();
    }
  });

  it("shows one soul now, from the node hosting it", async () => {
    const { status, body } = await json(await get("/api/souls/talker"));
    expect(status).toBe(200);
    expect(body.soul).toMatchObject({ id: "talker", node: "local", turns: 1 });
    expect(body.soulMemory).toMatchObject({ heard: 1 });
    expect(body).toHaveProperty("workingMemory");
    expect(body).toHaveProperty("machine");
    expect(body).not.toHaveProperty("soulId");
  });

  it("pages the committed turns, newest first", async () => {
    await perceive(node.bus, "talker", "second");
    await until(() => node.status().souls.find((s) => s.id === "talker")?.turns === 2, 10_000, "talker's second turn");
    const { status, body } = await json(await get("/api/souls/talker/turns?limit=1"));
    expect(status).toBe(200);
    expect(body.soulId).toBe("talker");
    expect((body.turns as { turn: number }[]).map((t) => t.turn)).toEqual([2]);
    expect(body.next).toBe(2);
    const older = await json(await get("/api/souls/talker/turns?before=2"));
    expect((older.body.turns as { turn: number; perception?: { content?: string } }[]).map((t) => [t.turn, t.perception?.content])).toEqual([[1, "hello debugger"]]);
    expect((await json(await get("/api/souls/talker/turns?limit=many"))).status).toBe(400);
  });

  it("reverts a soul, answers with the audit entry and tells the event stream", async () => {
    const sse = await openSse(new URL("/api/events", open.url).href, {});
    try {
      const res = await get("/api/souls/talker/revert", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ turn: 1, by: "ada" }) });
      const { status, body } = await json(res);
      expect(status).toBe(200);
      expect(body).toEqual({ soulId: "talker", revert: { turn: 2, toTurn: 1, by: "ada", at: expect.any(Number) } });
      const [event] = await sse.until((all) => all.some((e) => e.event === "revert"), 5_000);
      expect(JSON.parse(sse.events.find((e) => e.event === "revert")!.data)).toEqual(body);
      expect(event).toBeDefined();
      expect((await node.soul("talker")).memory().soulMemory).toMatchObject({ heard: 1 });
      // Without `by`, the client's address names who asked.
      const byAddress = await json(await get("/api/souls/talker/revert", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ turn: 1 }) }));
      expect(byAddress.body.revert).toMatchObject({ toTurn: 1, by: "127.0.0.1" });
    } finally {
      sse.close();
    }
  });

  it("answers JSON errors: unknown soul or turn 404, unreadable body 400, unknown path 404, wrong method 405", async () => {
    const unknown = await json(await get("/api/souls/nobody"));
    expect(unknown).toMatchObject({ status: 404, type: expect.stringMatching(/^application\/json/), body: { error: expect.stringContaining("unknown soul 'nobody'") } });
    expect((await json(await get("/api/souls/nobody/turns"))).status).toBe(404);
    expect((await json(await get("/api/souls/b%40d"))).status).toBe(404);
    const post = (body: string, type = "application/json") => get("/api/souls/talker/revert", { method: "POST", headers: { "Content-Type": type }, body });
    expect(await json(await post("{not json"))).toMatchObject({ status: 400, body: { error: expect.any(String) } });
    expect(await json(await post(JSON.stringify({ turn: "three" })))).toMatchObject({ status: 400, body: { error: expect.stringContaining("turn") } });
    expect(await json(await post(JSON.stringify({ turn: 0 })))).toMatchObject({ status: 400 });
    expect(await json(await post(JSON.stringify({ turn: 1 }), "text/plain"))).toMatchObject({ status: 400 });
    expect(await json(await post(JSON.stringify({ turn: 99 })))).toMatchObject({ status: 404, body: { error: expect.any(String) } });
    expect(await json(await post("x".repeat(20_000)))).toMatchObject({ status: 413 });
    expect(await json(await get("/api/nothing"))).toMatchObject({ status: 404, body: { error: expect.any(String) } });
    expect(await json(await get("/elsewhere"))).toMatchObject({ status: 404, body: { error: expect.any(String) } });
    const wrong = await get("/api/souls/talker/revert");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
  });

  it("serves the page, its script and its style, never cached, without CORS", async () => {
    const page = await get("/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("access-control-allow-origin")).toBeNull();
    expect(await page.text()).toMatch(/<html/i);
    const js = await get("/app.js");
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(js.headers.get("cache-control")).toBe("no-store");
    const css = await get("/app.css");
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
  });

  it("drops an event client that stops reading instead of buffering for it without bound", async () => {
    const { connect } = await import("node:net");
    const socket = connect(open.port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    socket.write(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${open.port}\r\nAccept: text/event-stream\r\n\r\n`);
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    await new Promise<void>((resolve) => socket.once("data", () => resolve()));
    socket.pause();
    // 32 MiB of events the client never reads: far past what socket buffers take in.
    const big = "x".repeat(32 * 1024);
    for (let i = 0; i < 1024; i++) {
      const env = makeEnvelope("event", "talker", "talker", { type: "soul.log", data: { soulId: "talker", message: big } });
      await node.bus.publish(node.subjects.events("talker"), encodeEnvelope(env));
    }
    await pause(200);
    socket.resume();
    socket.on("data", () => undefined);
    await expect(Promise.race([closed.then(() => "closed"), pause(5_000).then(() => "still open")])).resolves.toBe("closed");
  });

  it("refuses a request addressed to a name that is not loopback (DNS rebinding)", async () => {
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: open.port, path: "/api/souls", headers: { Host: `evil.example:${open.port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it("shows a silent node's souls down after three periods, and a stopped node's souls stopped", async () => {
    // A node of the cluster as the wire shows it: its heartbeats, then silence.
    const subject = node.subjects.node("ghost", "heartbeat");
    const beat = (state: NodeStatus["state"]) =>
      node.bus.publish(
        subject,
        encodeControl({
          node: "ghost", cluster: "dbg", pid: 1, startedAt: 1, state, bus: "in-process", daimons: [], skillGates: [],
          counters: { perceptions: 0, duplicates: 0, dead: 0, whispers: 0, heard: 0 },
          souls: [{ id: "spook", name: "Spook", process: "haunting", turns: 3, pending: 0, status: state === "stopped" ? "stopped" : "active" }],
        }),
      );
    const spook = async () => (await fleet()).souls.find((s) => s.id === "spook");
    let lastBeat = 0;
    for (let i = 0; i < 4; i++) {
      if (i > 0) await pause(100);
      await beat("running");
      lastBeat = Date.now();
    }
    await pause(50);
    expect(await spook()).toMatchObject({ node: "ghost", status: "active", turns: 3, process: "haunting" });
    let downAt = 0;
    while (Date.now() - lastBeat < 5_000 && downAt === 0) {
      if ((await spook())?.status === "down") downAt = Date.now();
      else await pause(20);
    }
    // Three periods of 100 ms, plus the sweep's granularity.
    expect(downAt - lastBeat).toBeGreaterThanOrEqual(280);
    expect(downAt - lastBeat).toBeLessThan(1_500);
    expect((await fleet()).nodes.find((n) => n.node === "ghost")?.state).toBe("down");
    await beat("stopped");
    await pause(50);
    expect(await spook()).toMatchObject({ node: "ghost", status: "stopped" });
    expect((await fleet()).nodes.map((n) => n.node)).toEqual(["local"]);
  });

  describe("with a token", () => {
    const at = (path: string, init: RequestInit = {}) => fetch(new URL(path, guarded.url), init);

    it("answers the API 401 without the token or with a wrong one, and 200 with it", async () => {
      const none = await at("/api/souls");
      expect(none.status).toBe(401);
      expect(none.headers.get("content-type")).toMatch(/^application\/json/);
      expect(((await none.json()) as { error: string }).error).toMatch(/token/);
      expect((await at("/api/souls", { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
      expect((await at("/api/souls/talker", { headers: { Authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
      expect((await at("/api/events", { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
      const ok = await at("/api/souls", { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as FleetSnapshot).souls.map((s) => s.id)).toEqual(expect.arrayContaining(["other", "talker"]));
      const events = await openSse(new URL("/api/events", guarded.url).href, { Authorization: `Bearer ${TOKEN}` });
      events.close();
    });

    it("serves the page with ?token= and a short 401 page without it; the script and style need none", async () => {
      const without = await at("/");
      expect(without.status).toBe(401);
      expect(without.headers.get("content-type")).toMatch(/^text\/html/);
      expect(await without.text()).toContain("?token=");
      expect((await at("/?token=wrong")).status).toBe(401);
      const page = await at(`/?token=${TOKEN}`);
      expect(page.status).toBe(200);
      expect(page.headers.get("referrer-policy")).toBe("no-referrer");
      const html = await page.text();
      expect(html).toMatch(/<html/i);
      expect(html).not.toContain(TOKEN);
      expect((await at("/app.js")).status).toBe(200);
      expect((await at("/app.css")).status).toBe(200);
    });
  });
});
