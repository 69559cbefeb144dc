// The one interface both notification adapters give the app (apart from
// `pickNotifier`, so that the adapters import it without an import cycle).
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
