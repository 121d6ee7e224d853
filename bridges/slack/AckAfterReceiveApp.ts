/**
 * A Bolt App that acknowledges an event only once its listeners have finished. Bolt acks an
 * Events API event before running the listeners (Socket Mode sends the ack at once), so a
 * perception that then fails to reach the bus would be lost: Slack, told "received", never
 * retries. Here the ack waits for the listeners (the bridge's resolves once the perception is
 * stored on the bus); a listener that throws leaves the event unacknowledged, and Slack
 * delivers it again. The same for both receivers: HTTP answers after, or answers 500.
 */
import { App, type ReceiverEvent } from "@slack/bolt";

export class AckAfterReceiveApp extends App {
  override async processEvent(event: ReceiverEvent): Promise<void> {
    let acked = false;
    let response: unknown;
    await super.processEvent({
      ...event,
      ack: async (body?: unknown) => {
        acked = true;
        response = body;
      },
    });
    // Events Bolt had nothing to say about (an unknown type) are still acked: no retry can help them.
    await event.ack(acked ? response : undefined);
  }
}
