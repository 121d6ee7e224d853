/**
 * The Socket Mode client as the bridge machine sees it: each closed socket shows the bridge
 * `reconnecting`, each `hello` from Slack `online` again.
 *
 * It also catches what the SDK leaves loose. The client reconnects by calling its own `start()`
 * from a timer and never handles that promise's rejection, so a reconnect Slack refuses (a
 * revoked app token; a network error after the client's own retries) would be an unhandled
 * rejection, which ends the node's process. After the first start, a failed reconnect is caught
 * here instead: a refused token shows the bridge `failed`; anything else is reported and tried
 * again, waiting longer each time (up to a minute).
 */
import type { SocketModeReceiver } from "@slack/bolt";
import type { BridgeRuntime } from "../core/index.ts";
import { slackErrorCode } from "./slackApi.ts";

type SocketClient = SocketModeReceiver["client"];

/** Slack's answers that no retry changes (the SDK's UnrecoverableSocketModeStartError). */
const REFUSED = new Set(["not_authed", "invalid_auth", "account_inactive", "user_removed_from_team", "team_disabled"]);
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 60_000;

export interface SocketWatch {
  /** The first connection is up: from now on closes and reconnects are the bridge's to show. */
  started(): void;
  /** The bridge is stopping: closes are expected, and nothing is retried. */
  stopping(): void;
}

export function watchSocket(socket: SocketClient, runtime: BridgeRuntime): SocketWatch {
  let live = false;
  let closing = false;
  let failures = 0;
  let retry: ReturnType<typeof setTimeout> | undefined;
  socket.on("close", () => {
    if (live && !closing) runtime.disconnected("the Socket Mode connection closed; reconnecting");
  });
  socket.on("connected", () => {
    failures = 0;
    if (live && !closing) runtime.connected();
  });

  const start = socket.start.bind(socket);
  const guarded = async (): Promise<Awaited<ReturnType<SocketClient["start"]>>> => {
    try {
      return await start();
    } catch (err) {
      // The first start's failure is the bridge's start failing: its caller says why.
      if (!live || closing) throw err;
      const code = slackErrorCode(err);
      if (code && REFUSED.has(code)) {
        runtime.failed(`Slack refused SLACK_APP_TOKEN (${code}) when reconnecting`);
      } else {
        failures++;
        const wait = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1));
        runtime.report(err, `reconnecting to Slack (trying again in ${Math.round(wait / 1000)} s)`);
        retry = setTimeout(() => void guarded(), wait);
      }
      // What the SDK's timer receives; nothing reads it.
      return undefined as unknown as Awaited<ReturnType<SocketClient["start"]>>;
    }
  };
  socket.start = guarded;
  return {
    started: () => void (live = true),
    stopping() {
      closing = true;
      clearTimeout(retry);
    },
  };
}
