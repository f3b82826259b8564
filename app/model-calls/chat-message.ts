/** One message of a chat completion, as the OpenAI-compatible endpoints take it (docs/evaluation.md#prompt-assembly). */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}
