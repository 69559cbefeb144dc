// The two notification adapters against stand-ins of what they talk to: the
// browser's Notification API and localStorage, and the Tauri plugin's
// functions. (The real ones run in tests/e2e/notifications.test.mjs and
// tests/desktop/notifications.test.mjs.)
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import type { Note } from "./decide";

const plugin = vi.hoisted(() => ({
  granted: true,
  sent: [] as { title: string; body?: string }[],
}));

vi.mock("@tauri-apps/plugin-notification", () => ({
  isPermissionGranted: async () => plugin.granted,
  requestPermission: async () => (plugin.granted ? "granted" : "denied"),
  sendNotification: (o: { title: string; body?: string }) => plugin.sent.push(o),
}));

const note: Note = { key: "gate:flow_1:t", title: "Flow: review waits for your decision", body: "Open it.", href: "#/flows/review/flow_1" };

/** A browser's Notification: `answer` is what the user says when asked. */
function fakeNotification(answer: NotificationPermission) {
  const made: { title: string; options: NotificationOptions; onclick: (() => void) | null; closed: boolean }[] = [];
  let permission: NotificationPermission = "default";
  let asked = 0;
  class Fake {
    onclick: (() => void) | null = null;
    closed = false;
    constructor(
      readonly title: string,
      readonly options: NotificationOptions,
    ) {
      made.push(this);
    }
    close() {
      this.closed = true;
    }
    static get permission() {
      return permission;
    }
    static async requestPermission() {
      asked += 1;
      permission = answer;
      return answer;
    }
  }
  return { Fake, made, asked: () => asked };
}

let focused = false;

beforeEach(() => {
  const store = new Map<string, string>();
  const target = new EventTarget();
  vi.stubGlobal("window", {
    localStorage: { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => store.set(k, v) },
    addEventListener: target.addEventListener.bind(target),
    dispatchEvent: target.dispatchEvent.bind(target),
    focus: () => {},
  });
  vi.stubGlobal("document", { hasFocus: () => focused });
  plugin.sent = [];
  plugin.granted = true;
  focused = false;
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("the browser adapter", () => {
  test("asks once at the first item, shows when granted, and a click opens the item", async () => {
    const n = fakeNotification("granted");
    (window as unknown as { Notification: unknown }).Notification = n.Fake;
    const { BrowserNotifier } = await import("./browser");
    const b = new BrowserNotifier();
    expect(b.permission()).toBe("default");
    expect(await b.ask(false)).toBe("granted");
    expect(await b.ask(false)).toBe("granted");
    expect(n.asked()).toBe(1);
    const opened: string[] = [];
    b.show(note, (href) => opened.push(href));
    expect(n.made.map((m) => [m.title, m.options.body, m.options.tag])).toEqual([[note.title, note.body, note.key]]);
    n.made[0]?.onclick?.();
    expect(opened).toEqual([note.href]);
    expect(n.made[0]?.closed).toBe(true);
  });

  test("a question left unanswered is not asked again unprompted, only on the user's click; nothing shows meanwhile", async () => {
    const n = fakeNotification("default");
    (window as unknown as { Notification: unknown }).Notification = n.Fake;
    const { BrowserNotifier } = await import("./browser");
    expect(await new BrowserNotifier().ask(false)).toBe("asked");
    // A new page (a reload) remembers it asked.
    const again = new BrowserNotifier();
    expect(again.permission()).toBe("asked");
    expect(await again.ask(false)).toBe("asked");
    expect(n.asked()).toBe(1);
    again.show(note, () => {});
    expect(n.made).toEqual([]);
    await again.ask(true);
    expect(n.asked()).toBe(2);
  });

  test("a browser without notifications says so and shows nothing", async () => {
    const { BrowserNotifier } = await import("./browser");
    const b = new BrowserNotifier();
    expect(b.permission()).toBe("unsupported");
    expect(await b.ask(true)).toBe("unsupported");
    b.show(note, () => {});
  });
});

describe("the desktop adapter", () => {
  test("sends through the plugin; the item shown while the window was away opens when it comes back", async () => {
    const { DesktopNotifier } = await import("./desktop");
    const d = new DesktopNotifier();
    expect(await d.ask(false)).toBe("granted");
    const opened: string[] = [];
    d.show(note, (href) => opened.push(href));
    expect(plugin.sent).toEqual([{ title: note.title, body: note.body }]);
    window.dispatchEvent(new Event("focus"));
    expect(opened).toEqual([note.href]);
    // Once: a later return to the window opens nothing.
    window.dispatchEvent(new Event("focus"));
    expect(opened).toEqual([note.href]);
  });

  test("shown while the user is in the window, it opens nothing on its own", async () => {
    const { DesktopNotifier } = await import("./desktop");
    const d = new DesktopNotifier();
    await d.ask(false);
    focused = true;
    const opened: string[] = [];
    d.show(note, (href) => opened.push(href));
    window.dispatchEvent(new Event("focus"));
    expect(plugin.sent).toHaveLength(1);
    expect(opened).toEqual([]);
  });

  test("without the permission nothing is sent", async () => {
    plugin.granted = false;
    const { DesktopNotifier } = await import("./desktop");
    const d = new DesktopNotifier();
    expect(await d.ask(false)).toBe("denied");
    d.show(note, () => {});
    expect(plugin.sent).toEqual([]);
  });
});
