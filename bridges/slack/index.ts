/**
 * The Slack bridge (@slack/bolt): Socket Mode or the HTTP Events API. Mentions, direct
 * messages and follow-ups in the soul's threads become perceptions; the soul's speech is
 * posted in the thread, streamed by editing, once per speech id also across restarts.
 */
export { startSlackBridge } from "./SlackBridge.ts";
export { parseSlackOptions, slackCredentials, slackOptionsSchema, type SlackBridgeOptions, type SlackCredentials, type SlackMode } from "./slackOptions.ts";
export { slackMessageOf } from "./slackMessages.ts";
export { escapeSlack, SlackOutlet, SPEECH_EVENT_TYPE, THINKING_REACTION } from "./SlackOutlet.ts";
export { EVENTS_PATH } from "./slackConnection.ts";
export type { SlackIdentity } from "./slackIdentity.ts";
