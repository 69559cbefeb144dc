// Keeps the list of waiting items live (read again on every event that can
// change it) and turns what `decide` finds news into notifications through
// the adapter for where the UI runs. Mounted once, in the sidebar.
import { useEffect, useRef, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { WaitingItem } from "../generated";
import { go } from "../lib/router";
import type { Transport } from "../transport";
import { fromEvent, fromOwnCall, fromWaiting, initialState, type Incoming, type Note, type NoticeState, type OwnCall } from "./decide";
import { pickNotifier, type Notifier, type Permission } from "./notifier";

/** Events after which the waiting list may differ. */
const CHANGES = new Set([
  "flow_status",
  "turn_final",
  "manual_prompt",
  "manual_prompt_closed",
  "run_changed",
  "run_finished",
  "build_changed",
  "status_changed",
  "workflow_deleted",
]);

const viewing = () => ({ hash: window.location.hash, focused: document.hasFocus() });

/** Lets `onCall` see every call this window makes (the user's own actions),
 * without the screens knowing; returns the undo. */
function watchCalls(transport: Transport, onCall: (call: OwnCall) => void): () => void {
  const t = transport as unknown as { call: (name: string, args: Record<string, unknown>) => Promise<unknown> };
  const original = t.call;
  t.call = function (name, args) {
    onCall({ name, args });
    return original.call(this, name, args);
  };
  return () => {
    t.call = original;
  };
}

/** The waiting items, the notification permission and a way for the user to ask for it. */
export function useWaiting() {
  const transport = useTransport();
  const [items, setItems] = useState<WaitingItem[]>([]);
  const [permission, setPermission] = useState<Permission>("unsupported");
  const state = useRef<NoticeState>(initialState());
  const itemsNow = useRef<WaitingItem[]>([]);
  const notifier = useRef<Notifier | null>(null);

  useEffect(() => {
    let live = true;
    let asked = false;
    let seq = 0;
    const ready = pickNotifier().then((n) => {
      notifier.current = n;
      if (live) setPermission(n.permission());
      return n;
    });
    const show = async (notes: Note[], anyWaiting: boolean) => {
      const n = await ready;
      // Browsers want the question at a moment that explains it: the first waiting item.
      if ((anyWaiting || notes.length) && !asked && n.permission() === "default") {
        asked = true;
        const p = await n.ask(false);
        if (live) setPermission(p);
      }
      for (const note of notes) n.show(note, go);
    };
    const refresh = () => {
      const mine = ++seq;
      transport
        .waitingItems()
        .then((list) => {
          // An older answer arriving after a newer one is stale.
          if (!live || mine !== seq) return;
          itemsNow.current = list.items;
          setItems(list.items);
          const next = fromWaiting(state.current, list.items, viewing());
          state.current = next.state;
          void show(next.notes, list.items.length > 0);
        })
        .catch(() => {});
    };
    refresh();
    const stopEvents = transport.onEvent((e) => {
      const incoming = e as unknown as Incoming;
      const next = fromEvent(state.current, incoming, viewing());
      state.current = next.state;
      if (next.notes.length) void show(next.notes, false);
      if (CHANGES.has(incoming.type)) refresh();
    });
    // Events sent before the stream (re)connected were missed: read the list again.
    const stopConnected = transport.onConnected(refresh);
    const stopCalls = watchCalls(transport, (call) => {
      state.current = fromOwnCall(state.current, call, itemsNow.current);
    });
    return () => {
      live = false;
      stopEvents();
      stopConnected();
      stopCalls();
    };
  }, [transport]);

  const ask = async () => {
    const n = notifier.current;
    if (n) setPermission(await n.ask(true));
  };
  return { items, permission, ask };
}
