// The Tauri transport, for the desktop window: one IPC command per service
// call (see src-tauri/src/commands.rs) and the `maskflow://event` event.
// Files dropped on the window arrive as paths and are read where they lie.
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type {
  CreateWorkflow,
  CreatedVersion,
  Event,
  MessageReply,
  UploadedFile,
  VersionView,
  WorkflowSummary,
  WorkflowView,
} from "../generated";
import { toApiError, type FileSource, type OnProgress, type Transport } from "./index";

/** The Tauri event that carries core events (src-tauri's `EVENT`). */
export const EVENT = "maskflow://event";

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw toApiError(e);
  }
}

export class TauriTransport implements Transport {
  listWorkflows() {
    return call<WorkflowSummary[]>("list_workflows");
  }
  getWorkflow(workflow_id: string) {
    return call<WorkflowView>("get_workflow", { workflow_id });
  }
  getVersion(workflow_id: string, version_id: string) {
    return call<VersionView>("get_version", { workflow_id, version_id });
  }
  createWorkflow(request: CreateWorkflow) {
    return call<CreatedVersion>("create_workflow", { request });
  }
  sendMessage(workflow_id: string, content: string) {
    return call<MessageReply>("send_message", { workflow_id, content });
  }
  approve(workflow_id: string, version_id: string) {
    return call<WorkflowView>("approve", { workflow_id, version_id });
  }
  edit(workflow_id: string, version_id: string) {
    return call<CreatedVersion>("edit", { workflow_id, version_id });
  }
  async deleteWorkflow(workflow_id: string) {
    await call<null>("delete_workflow", { workflow_id });
  }

  async extract(source: FileSource, onProgress?: OnProgress): Promise<UploadedFile> {
    if (source.kind === "path") return call<UploadedFile>("extract_path", { path: source.path });
    const bytes = new Uint8Array(await source.file.arrayBuffer());
    onProgress?.(1);
    try {
      return await invoke<UploadedFile>("upload_file", bytes, {
        headers: { "x-filename": encodeURIComponent(source.file.name) },
      });
    } catch (e) {
      throw toApiError(e);
    }
  }

  onEvent(listener: (e: Event) => void): () => void {
    const stop = listen<Event>(EVENT, (e) => listener(e.payload));
    return () => {
      void stop.then((f) => f());
    };
  }

  onNativeDrop(listener: (paths: string[]) => void): () => void {
    const stop = listen<{ paths: string[] }>("tauri://drag-drop", (e) => {
      if (e.payload.paths.length) listener(e.payload.paths);
    });
    return () => {
      void stop.then((f) => f());
    };
  }
}
