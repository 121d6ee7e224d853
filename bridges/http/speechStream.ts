/**
 * `GET /v1/souls/:id/speech`: the soul's speech as Server-Sent Events, resumable with
 * Last-Event-ID (docs/HTTP.md 5). One of the server's bounded streams: refused with 503 when
 * all are taken, and dropped when the client stops reading (it resumes where it left off).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendJson } from "../../runtime/http/index.ts";
import type { EphemeralEvent } from "./EphemeralFeed.ts";
import type { HttpSoulRoute } from "./httpRoutes.ts";
import { speechEventData, type SpeechEvent } from "./SpeechLog.ts";
import type { StreamLimits } from "./StreamLimits.ts";

const KEEP_ALIVE_MS = 15_000;
/** Events read from the log at once while a client catches up. */
const REPLAY_PAGE = 256;

function sseFrame(e: SpeechEvent): string {
  return `event: ${e.event}\nid: ${e.seq}\ndata: ${JSON.stringify(speechEventData(e))}\n\n`;
}

/** No `id:` line: an ephemeral event is not in the log, so it leaves the client's Last-Event-ID as it was. */
function ephemeralFrame(e: EphemeralEvent): string {
  return `event: ephemeral\ndata: ${JSON.stringify(e)}\n\n`;
}

export const TOO_MANY_STREAMS = "too many speech streams open on this server; close one and try again";

/** What is logged after Last-Event-ID (or from now), then live. */
export function streamSpeech(req: IncomingMessage, res: ServerResponse, route: HttpSoulRoute, limits: StreamLimits): void {
  const give = limits.take();
  if (!give) return sendJson(res, 503, { error: TOO_MANY_STREAMS }, false, { "Retry-After": "5" });
  const lastHeader = req.headers["last-event-id"];
  const last = Number(Array.isArray(lastHeader) ? lastHeader[0] : lastHeader);
  res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", Connection: "keep-alive", "X-Accel-Buffering": "no" });
  const stops: (() => void)[] = [give];
  const leave = () => {
    for (const stop of stops.splice(0)) stop();
  };
  // A client this far behind would make the server hold everything for it: it goes, and resumes with Last-Event-ID.
  const write = (frame: string) => {
    if (res.destroyed) return;
    if (limits.behind(res.writableLength)) return void (res.destroy(), leave());
    res.write(frame);
  };
  res.on("close", leave);
  res.on("error", leave);
  write(": ensoul speech\n\n");
  let sent = Number.isSafeInteger(last) && last >= 0 ? last : route.log.last;
  let replaying = true;
  // What it missed, a page at a time as the client reads it; live events wait until it has caught up.
  const replay = () => {
    for (let page = route.log.since(sent, REPLAY_PAGE); page.length > 0 && !res.destroyed; page = route.log.since(sent, REPLAY_PAGE)) {
      for (const e of page) {
        sent = e.seq;
        if (!res.write(sseFrame(e))) return void res.once("drain", replay);
      }
    }
    replaying = false;
  };
  stops.push(
    route.log.listen((e) => {
      if (replaying || e.seq <= sent) return;
      sent = e.seq;
      write(sseFrame(e));
    }),
  );
  replay();
  const stopEphemeral = route.ephemeral?.listen((e) => write(ephemeralFrame(e)));
  if (stopEphemeral) stops.push(stopEphemeral);
  const keepAlive = setInterval(() => write(": keep-alive\n\n"), KEEP_ALIVE_MS);
  keepAlive.unref();
  stops.push(() => clearInterval(keepAlive));
}
