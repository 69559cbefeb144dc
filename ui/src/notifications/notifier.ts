// The one interface both notification adapters give the app: the desktop
// window's OS notifications (Tauri's notification plugin) and a browser
// tab's Web Notifications. `pickNotifier` chooses one, like `pickTransport`.
import { inTauri } from "../transport";
import type { Note } from "./decide";

/** Whether notifications may be shown: the browser's words, plus `asked`
 * (asked once, not answered: not asked again unprompted) and `unsupported`. */
export type Permission = "granted" | "denied" | "default" | "asked" | "unsupported";

/** Shows notifications where the UI runs. */
export interface Notifier {
  /** The permission now. */
  permission(): Permission;
  /** Asks for the permission, once unless `byUser` (a click on "Notify me"). */
  ask(byUser: boolean): Promise<Permission>;
  /** Shows a note; `open` is called with its `href` when it is clicked, where the platform tells. */
  show(note: Note, open: (href: string) => void): void;
}

/** The notifier for where the UI runs. */
export async function pickNotifier(): Promise<Notifier> {
  if (inTauri()) {
    const { DesktopNotifier } = await import("./desktop");
    return new DesktopNotifier();
  }
  const { BrowserNotifier } = await import("./browser");
  return new BrowserNotifier();
}
