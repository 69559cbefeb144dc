// The access token of `maskflow serve`, in the browser. The server prints
// `http://127.0.0.1:PORT/#token=…`: the fragment is never sent to any
// server, and no cookie exists (cookies are not scoped by port, so one would
// reach every other server on 127.0.0.1). At start the page moves the token
// into its tab's sessionStorage and takes it out of the address bar; the
// HTTP transport then sends it as `Authorization: Bearer …`.

/** Where this tab keeps the token. */
export const TOKEN_KEY = "maskflow.token";

/** A fragment that carries the token: `#token=T`, or `#token=T#/route` to
 * open a screen too. Returns the token and the fragment left (`""` or
 * `#/route`), or null when the fragment carries no token. */
export function splitTokenHash(hash: string): { token: string; rest: string } | null {
  const match = /^#token=([^#&]*)(?:[#&](.*))?$/.exec(hash);
  if (!match) return null;
  let token: string;
  try {
    token = decodeURIComponent(match[1] ?? "");
  } catch {
    return null;
  }
  if (!token) return null;
  const rest = match[2] ? "#" + match[2].replace(/^#/, "") : "";
  return { token, rest };
}

/** Moves a token from the URL's fragment into sessionStorage (a new token
 * replaces the one kept, as after a server restart) and removes it from the
 * address bar and the history entry; returns the token this tab holds. */
export function takeToken(): string | null {
  const found = splitTokenHash(window.location.hash);
  let storage: Storage | null = null;
  try {
    storage = window.sessionStorage;
  } catch {
    storage = null;
  }
  if (found) {
    storage?.setItem(TOKEN_KEY, found.token);
    const { pathname, search } = window.location;
    window.history.replaceState(window.history.state, "", pathname + search + found.rest);
    if (!storage) return found.token;
  }
  return storage?.getItem(TOKEN_KEY) ?? null;
}

/** Takes a token pasted into the address bar of a tab that is already open
 * (a fragment change loads no page), then reloads so every screen asks again. */
export function watchForToken(): void {
  window.addEventListener("hashchange", () => {
    if (!splitTokenHash(window.location.hash)) return;
    takeToken();
    window.location.reload();
  });
}
