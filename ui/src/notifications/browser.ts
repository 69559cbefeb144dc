// Notifications in a browser tab against `maskflow serve`: the Web
// Notification API. The permission is asked once, ever (remembered in this
// browser): at the first waiting item, or when the user clicks "Notify me"
// (browsers that only allow asking on a click). A refusal is final here; the
// badge still counts.
import type { Note } from "./decide";
import type { Notifier, Permission } from "./types";

/** Where this browser remembers that Maskflow asked. */
export const ASKED_KEY = "maskflow.notifications.asked";

function remembered(): boolean {
  try {
    return window.localStorage.getItem(ASKED_KEY) === "1";
  } catch {
    return false;
  }
}

function remember(): void {
  try {
    window.localStorage.setItem(ASKED_KEY, "1");
  } catch {
    // Storage refused (a private window): asking again next time is all that happens.
  }
}

/** The Web Notification API, or null where the browser has none. */
function api(): typeof Notification | null {
  return typeof window !== "undefined" && "Notification" in window ? window.Notification : null;
}

/** Browser notifications. */
export class BrowserNotifier implements Notifier {
  permission(): Permission {
    const N = api();
    if (!N) return "unsupported";
    if (N.permission === "default" && remembered()) return "asked";
    return N.permission;
  }

  async ask(byUser: boolean): Promise<Permission> {
    const N = api();
    if (!N) return "unsupported";
    // Never nag: once asked (and not granted), only the user's own click asks again.
    if (N.permission !== "default" || (remembered() && !byUser)) return this.permission();
    remember();
    try {
      await N.requestPermission();
    } catch {
      // An old callback-only API or a refusal to ask outside a click: the button stays.
    }
    return this.permission();
  }

  show(note: Note, open: (href: string) => void): void {
    const N = api();
    if (!N || N.permission !== "granted") return;
    try {
      // `tag` makes a second notice of the same item replace the first.
      const n = new N(note.title, { body: note.body, tag: note.key, icon: "./icon.png" });
      n.onclick = () => {
        window.focus();
        open(note.href);
        n.close();
      };
    } catch {
      // Some browsers allow notifications only from a service worker; the badge still counts.
    }
  }
}
