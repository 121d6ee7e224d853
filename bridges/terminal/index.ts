/** The terminal bridge: `ensoul chat`'s side of the conversation. */
export { runTerminalChat, type ChatSpeech, type ChatTurn, type TerminalChatOptions } from "./terminalChat.ts";
