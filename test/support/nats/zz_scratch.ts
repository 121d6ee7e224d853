import { connect, headers } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy, StorageType, RetentionPolicy } from "@nats-io/jetstream";
import { startNatsServer } from "./natsServer.ts";

const srv = await startNatsServer();
const nc = await connect({ servers: srv.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
(async () => { for await (const s of nc.status()) console.log("status", s.type); })();
try { await nc.request("nobody", new Uint8Array(), { timeout: 500 }); } catch (e) { const err = e as Error; console.log("noresp:", err.constructor.name, err.message, (err.cause as Error)?.constructor?.name); }
const sub = nc.subscribe("slow", { callback: () => {} });
try { await nc.request("slow", new Uint8Array(), { timeout: 200 }); } catch (e) { const err = e as Error; console.log("timeout:", err.constructor.name, err.message, (err.cause as Error)?.constructor?.name); }
sub.unsubscribe();
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "T", subjects: ["t.>"], storage: StorageType.File, duplicate_window: 120e9, retention: RetentionPolicy.Limits });
const js = jetstream(nc);
console.log(await js.publish("t.a", new Uint8Array([1]), { msgID: "x" }));
console.log(await js.publish("t.a", new Uint8Array([1]), { msgID: "x" }));
const ci = await jsm.consumers.add("T", { durable_name: "c1", ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, filter_subject: "t.>", ack_wait: 1e9 });
console.log("ci", ci.name);
const ci2 = await jsm.consumers.add("T", { durable_name: "c1", ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, filter_subject: "t.>", ack_wait: 2e9 }).catch((e) => String(e));
console.log("ci2", typeof ci2 === "string" ? ci2 : ci2.config.ack_wait);
const c = await js.consumers.get("T", "c1");
const msgs = await c.consume({ max_messages: 10 });
(async () => { for await (const s of msgs.status()) console.log("cstatus", s.type); })();
let n = 0;
const t0 = Date.now();
for await (const m of msgs) { console.log("got", m.seq, m.redelivered, m.info.deliveryCount, Date.now() - t0); if (++n === 1) m.nak(); else { m.ack(); break; } }
// publish while down
await srv.stop();
console.log("stopped");
const p = js.publish("t.b", new Uint8Array([2]), { msgID: "y", timeout: 1000 }).then((a) => console.log("late ack", a), (e) => console.log("pub err while down:", (e as Error).constructor.name, (e as Error).message));
await p;
const pubDown = nc.publish("t.c", new Uint8Array([3]));
console.log("core publish while down ok");
await srv.restart();
console.log("restarted");
await new Promise((r) => setTimeout(r, 1000));
console.log(await js.publish("t.b", new Uint8Array([2]), { msgID: "y", timeout: 1000 }).catch((e) => String(e)));
console.log((await jsm.streams.info("T")).state);
await nc.drain();
await srv.dispose();
