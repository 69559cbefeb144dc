// OS notifications in the desktop window, through Tauri's notification
// plugin. On desktop the plugin reports no click (its `onAction` is for
// mobile), so the item of the last notification shown while the window was
// in the background opens when the user comes back to the window — which is
// what clicking the notification does where the desktop raises the app.
import { isPermissionGranted, requestPermission, sendNotification } from "@tauri-apps/plugin-notification";
import type { Note } from "./decide";
import type { Notifier, Permission } from "./types";

/** OS notifications through the Tauri plugin. */
export class DesktopNotifier implements Notifier {
  private granted: Permission = "default";
  /** The item to open when the window is focused again. */
  private pending: string | null = null;
  private open: ((href: string) => void) | null = null;

  constructor() {
    void isPermissionGranted().then(
      (ok) => (this.granted = ok ? "granted" : "default"),
      () => (this.granted = "unsupported"),
    );
    window.addEventListener("focus", () => {
      const href = this.pending;
      this.pending = null;
      if (href && this.open) this.open(href);
    });
  }

  permission(): Permission {
    return this.granted;
  }

  async ask(_byUser: boolean): Promise<Permission> {
    if (this.granted === "granted" || this.granted === "unsupported") return this.granted;
    try {
      this.granted = (await isPermissionGranted()) ? "granted" : await requestPermission();
    } catch {
      this.granted = "unsupported";
    }
    return this.granted;
  }

  show(note: Note, open: (href: string) => void): void {
    if (this.granted !== "granted") return;
    this.open = open;
    if (!document.hasFocus()) this.pending = note.href;
    sendNotification({ title: note.title, body: note.body });
  }
}
