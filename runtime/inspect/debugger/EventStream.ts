/**
 * `GET /api/events`: the debugger's Server-Sent Events (docs/DEBUGGER.md). Every soul's events
 * (`ensoul.<cluster>.soul.*.events`) go out as they come, with the `fleet` and `revert` events
 * the debugger raises itself.
 *
 * The node publishes these events whether anyone watches or not, so this side must never be
 * what slows it: each event is decoded and turned into text once, whatever the number of
 * clients, the bus is listened to only while a client is connected, and a client that does not
 * read (its socket's buffer over a limit) is dropped rather than buffered for without bound. The
 * page reconnects and reloads what it shows.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { clusterSubjects, decodeEnvelope, isKind, soulOfSubject, type Bus, type Subscription } from "../../bus/index.ts";

export interface EventStreamOptions {
  /** Bytes a client may leave unread before it is dropped (default 1 MiB). */
  maxBufferedBytes?: number;
  /** Clients at once (default 32); more get 503. */
  maxClients?: number;
  /** Interval of the keep-alive comment (default 15 s). */
  keepAliveMs?: number;
  onError?(err: unknown, what: string): void;
}

export class EventStream {
  readonly #clients = new Set<ServerResponse>();
  readonly #bus: Bus;
  readonly #subject: string;
  readonly #maxBuffered: number;
  readonly #maxClients: number;
  readonly #keepAliveMs: number;
  readonly #onError: (err: unknown, what: string) => void;
  #events: Subscription | undefined;
  #keepAlive: NodeJS.Timeout | undefined;

  constructor(bus: Bus, cluster: string, options: EventStreamOptions = {}) {
    this.#bus = bus;
    this.#subject = clusterSubjects(cluster).allSouls("events");
    this.#maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
    this.#maxClients = options.maxClients ?? 32;
    this.#keepAliveMs = options.keepAliveMs ?? 15_000;
    this.#onError = options.onError ?? (() => undefined);
  }

  get clients(): number {
    return this.#clients.size;
  }

  /** Takes over the response for as long as the client stays. False when there are too many clients. */
  attach(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.#clients.size >= this.#maxClients) return false;
    res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", Connection: "keep-alive", "X-Accel-Buffering": "no" });
    res.write(": ensoul debugger\n\n");
    this.#clients.add(res);
    const leave = () => this.#leave(res);
    req.on("close", leave);
    res.on("close", leave);
    res.on("error", leave);
    if (this.#clients.size === 1) this.#listen();
    return true;
  }

  /** Sends one event to every client; `data` is JSON that names the soul it is about. */
  publish(type: string, data: object): void {
    if (this.#clients.size === 0) return;
    let json: string;
    try {
      json = JSON.stringify(data);
    } catch (err) {
      return this.#onError(err, `a ${type} event`);
    }
    // Types come from envelopes, which refuse control characters; a line break would still end the field.
    this.#send(`event: ${type.replace(/[\r\n]/g, " ")}\ndata: ${json}\n\n`);
  }

  close(): void {
    for (const res of [...this.#clients]) res.destroy();
    this.#clients.clear();
    this.#quiet();
  }

  #send(frame: string): void {
    for (const res of this.#clients) {
      if (res.writableLength > this.#maxBuffered) {
        // A client this far behind would make the server hold everything for it.
        res.destroy();
        this.#leave(res);
        continue;
      }
      res.write(frame);
    }
  }

  #leave(res: ServerResponse): void {
    if (!this.#clients.delete(res)) return;
    if (this.#clients.size === 0) this.#quiet();
  }

  #listen(): void {
    this.#events = this.#bus.subscribe(this.#subject, (msg) => {
      const soul = soulOfSubject(msg.subject);
      if (!("id" in soul)) return;
      const decoded = decodeEnvelope(msg.data);
      if (!decoded.ok || !isKind(decoded.envelope, "event")) return;
      const { id, ts, body } = decoded.envelope;
      this.publish(body.type, { soulId: soul.id, type: body.type, data: body.data ?? {}, at: ts, id });
    });
    this.#keepAlive = setInterval(() => this.#send(": keep-alive\n\n"), this.#keepAliveMs);
    this.#keepAlive.unref();
  }

  #quiet(): void {
    this.#events?.unsubscribe();
    this.#events = undefined;
    if (this.#keepAlive) clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
  }
}
