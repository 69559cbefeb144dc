// The Builder (seed 000's layout): chat on the left (30%), files on the
// right (70%). Files are read locally into masked extracts; the chat opens
// only after the user approves exactly what will be sent. The open workflow
// lives in useBuilderWorkflow, the files in useFileChips, the chat in useChat.
import { useReducer, useState } from "preact/hooks";
import { PrivacyDialog } from "../components/PrivacyDialog";
import type { Streaming } from "../components/LlmProgress";
import { ChatPane } from "../builder/ChatPane";
import { FilesPane } from "../builder/FilesPane";
import { useBuilderWorkflow } from "../builder/useBuilderWorkflow";
import { useChat } from "../builder/useChat";
import { useFileChips } from "../builder/useFileChips";
import { chipsReducer } from "../lib/chips";

/** The Builder for a new workflow, or for the route's workflow. */
export function Builder({ workflowId }: { workflowId?: string }) {
  const [chips, dispatch] = useReducer(chipsReducer, []);
  const [streaming, setStreaming] = useState<Streaming | null>(null);
  const wf = useBuilderWorkflow(workflowId, dispatch, setStreaming);
  const files = useFileChips(chips, dispatch, wf.workflow, wf.setNotice);
  const chat = useChat(wf.workflow, wf.reload, wf.setNotice, setStreaming);
  const { blocked, setBlocked, deliver } = chat;

  return (
    <div class="builder">
      <ChatPane workflow={wf.workflow} chat={chat} streaming={streaming} onGate={wf.onGate} />

      {blocked && (
        <PrivacyDialog
          matches={blocked.matches}
          content={blocked.content}
          onCancel={() => setBlocked(null)}
          onConfirm={() => {
            const { content } = blocked;
            setBlocked(null);
            void deliver(content, true);
          }}
        />
      )}
      <FilesPane wf={wf} files={files} chips={chips} dispatch={dispatch} />
    </div>
  );
}
