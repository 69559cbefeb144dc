// The Tauri transport, for the desktop window: one IPC command per service
// call (see src-tauri/src/commands.rs) and the `maskflow://event` event.
// Files dropped on the window arrive as paths and are read where they lie.
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type { Event, UploadedFile } from "../generated";
import type { CallName } from "../generated/api";
import { CallTransport, type Args, type Result, type Transport } from "./client";
import { toApiError, type FileSource, type OnProgress, type OutputLocation } from "./types";

/** The Tauri event that carries core events (src-tauri's `EVENT`). */
export const EVENT = "maskflow://event";

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw toApiError(e);
  }
}

export class TauriTransport extends CallTransport implements Transport {
  /** One call of the list: the command of its name, with its arguments as they are. */
  call<N extends CallName>(name: N, args: Args<N>): Promise<Result<N>> {
    return call<Result<N>>(name, args as Record<string, unknown>);
  }

  sessionFile(workflow_id: string, version_id: string, iteration: number, path: string) {
    return call<string>("session_file", { workflow_id, version_id, iteration, path });
  }
  async testOutputLocation(workflow_id: string, version_id: string, name: string): Promise<OutputLocation> {
    return { kind: "path", path: await call<string>("test_output", { workflow_id, version_id, name }) };
  }
  async outputLocation(run_id: string, name: string): Promise<OutputLocation> {
    return { kind: "path", path: await call<string>("run_output", { run_id, name }) };
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

  onConnected(listener: () => void): () => void {
    // Tauri's events flow once a listener is registered: the registration is the connection.
    const stop = listen<Event>(EVENT, () => {});
    void stop.then(() => listener());
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
