// Picks the notification adapter for where the UI runs, like
// `pickTransport`: the desktop window's OS notifications (Tauri's
// notification plugin) or a browser tab's Web Notifications.
import { inTauri } from "../transport";
import type { Notifier } from "./types";

export type { Notifier, Permission } from "./types";

/** The notifier for where the UI runs. */
export async function pickNotifier(): Promise<Notifier> {
  if (inTauri()) {
    const { DesktopNotifier } = await import("./desktop");
    return new DesktopNotifier();
  }
  const { BrowserNotifier } = await import("./browser");
  return new BrowserNotifier();
}
