// The one interface every screen uses to reach Maskflow. Two
// implementations: Tauri IPC + events (the desktop window) and HTTP +
// WebSocket (a browser against `maskflow serve`); both make the calls of
// core's one list through `CallTransport` (client.ts). `pickTransport` chooses one
// at start; no screen knows which it got.
import { takeToken, watchForToken } from "./token";
import type { Transport } from "./client";
import { inTauri } from "./types";

export * from "./types";
export type { Args, ListCalls, OutputSource, Result, Transport } from "./client";

/** The transport for where the UI runs. */
export async function pickTransport(): Promise<Transport> {
  if (inTauri()) {
    const { TauriTransport } = await import("./tauri");
    return new TauriTransport();
  }
  // At once, before anything awaits (the page's load event, the app's first
  // route): the fragment may carry the token.
  const token = takeToken();
  watchForToken();
  const { HttpTransport } = await import("./http");
  if (!token) {
    throw new Error(
      "this tab has no access token: open the URL printed by `maskflow serve` (it ends in #token=…), or paste it into the address bar",
    );
  }
  return new HttpTransport(window.location.origin, token);
}
