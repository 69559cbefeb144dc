// How a message or a build ended, as the chat tells it (issue 28): the
// core stores each outcome as a `notice` message; these decide what the
// Builder still adds around them.
import type { MessageView } from "../generated";
import type { ApiError } from "../transport";

/** The role of Maskflow's own notes in a conversation. */
export const NOTICE = "notice";

/** Whether the conversation already tells how version `versionId` ended (a stored notice on it). */
export function toldInChat(messages: Pick<MessageView, "role" | "version_id">[], versionId: string): boolean {
  return messages.some((m) => m.role === NOTICE && m.version_id === versionId);
}

/** Whether an error means the user stopped the call (not a failure). */
export function wasCancelled(e: Pick<ApiError, "code" | "message">): boolean {
  return e.code === "cancelled" || /cancelled/.test(e.message);
}
