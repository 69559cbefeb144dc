// The HTTP + WebSocket transport, for a browser against `maskflow serve`:
// every call of the list goes by the method and path `../generated/api.ts`
// gives it; uploads, downloads, session files and events are written here.
// The token (from the printed URL's fragment, kept in the tab's
// sessionStorage by ./token.ts) travels as `Authorization: Bearer …` on
// every request, and as the `maskflow.bearer.…` subprotocol on the event
// WebSocket, which cannot carry a header. No cookie: one would go to every
// other server on 127.0.0.1. Downloads are fetched with the header and
// saved from a blob, so no link to the API needs a credential.
import type { Event, GuardMatch, NextStep, UploadedFile } from "../generated";
import { calls, type CallName, type CallSpec } from "../generated/api";
import { saveBlob } from "../lib/download";
import { CallTransport, type Args, type Result, type Transport } from "./client";
import { ApiError, type FileSource, type OnProgress, type OutputLocation } from "./types";

/** The error body of the HTTP API: core's `ErrorBody` (`code`) plus `error`, the same code. */
interface HttpErrorBody {
  error?: string;
  code?: string;
  message: string;
  matches?: GuardMatch[];
  detail?: string;
  next_steps?: NextStep[];
}

function isErrorBody(v: unknown): v is HttpErrorBody {
  if (!v || typeof v !== "object") return false;
  const b = v as HttpErrorBody;
  return typeof b.message === "string" && (typeof b.error === "string" || typeof b.code === "string");
}

/** Builds the ApiError of a failed response. */
export function errorFromResponse(status: number, body: unknown): ApiError {
  if (isErrorBody(body)) {
    const code = typeof body.error === "string" ? body.error : String(body.code);
    const detail = typeof body.detail === "string" ? body.detail : null;
    const steps = Array.isArray(body.next_steps) ? body.next_steps : [];
    return new ApiError(code, body.message, Array.isArray(body.matches) ? body.matches : [], detail, steps);
  }
  return new ApiError("http_" + status, `Maskflow answered ${status}.`);
}

const seg = encodeURIComponent;

/** The URL of a call: its path with the path arguments, then (for a call
 * with a query) the other arguments but the body as the query string. */
function urlOf(spec: CallSpec, args: Record<string, unknown>): string {
  let path = spec.path;
  for (const [param, arg] of spec.pathParams) path = path.replace(`{${param}}`, seg(String(args[arg])));
  if (!spec.query) return path;
  const taken = new Set<string>(spec.pathParams.map(([, arg]) => arg));
  if (spec.body) taken.add(spec.body);
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(args)) {
    if (taken.has(key) || value === undefined || value === null || value === "") continue;
    query.set(key, String(value));
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/** The subprotocol the server selects on the event socket. */
const WS_PROTOCOL = "maskflow";
/** The subprotocol that carries the token to the event socket. */
const WS_TOKEN_PREFIX = "maskflow.bearer.";
/** Event types beyond seed 004's that this UI asks the socket for. */
const UI_EXTRA_EVENTS = ["flow_turn", "flow_status", "llm_call_started", "ledger_entry"];

/** The ApiError of a request that did not reach the server. */
function unreachable(): ApiError {
  return new ApiError("network", "Maskflow cannot be reached. Is `maskflow serve` still running?");
}

/** The body of a response as JSON, else its text, else undefined. */
function parseBody(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export class HttpTransport extends CallTransport implements Transport {
  private listeners = new Set<(e: Event) => void>();
  private socket: WebSocket | null = null;
  private readonly connectedListeners = new Set<() => void>();
  private retry = 0;

  /** `token`: the server's access token (null: every API call answers 401). */
  constructor(
    private readonly origin: string,
    private readonly token: string | null,
  ) {
    super();
  }

  /** The headers that carry the token. */
  private auth(): Record<string, string> {
    return this.token ? { Authorization: `Bearer ${this.token}` } : {};
  }

  /** One call of the list, as its method, path, query and JSON body say. */
  async call<N extends CallName>(name: N, args: Args<N>): Promise<Result<N>> {
    const spec: CallSpec = calls[name];
    const all = args as Record<string, unknown>;
    const body = spec.body ? all[spec.body] : undefined;
    return (await this.fetchJson(spec.method, urlOf(spec, all), body, spec.reply)) as Result<N>;
  }

  private async fetchJson(method: string, path: string, body: unknown, reply: CallSpec["reply"]): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(this.origin + path, {
        method,
        credentials: "omit",
        headers: body === undefined ? this.auth() : { ...this.auth(), "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw unreachable();
    }
    const text = await response.text();
    if (reply === "text" && response.ok) return text;
    const parsed = parseBody(text);
    if (response.ok) return reply === "empty" ? undefined : parsed;
    // A two-step delete's first step: 409 with what would be deleted and a token.
    const preview = parsed as { confirm_token?: unknown } | undefined;
    if (reply === "delete" && response.status === 409 && typeof preview?.confirm_token === "string") return parsed;
    throw errorFromResponse(response.status, parsed);
  }

  sessionFile(id: string, versionId: string, iteration: number, path: string) {
    const p = path.split("/").map(seg).join("/");
    return this.fetchJson(
      "GET",
      `/api/workflows/${seg(id)}/versions/${seg(versionId)}/sessions/${iteration}/${p}`,
      undefined,
      "text",
    ) as Promise<string>;
  }
  testOutputLocation(id: string, versionId: string, name: string): Promise<OutputLocation> {
    return Promise.resolve(
      this.download(`/api/workflows/${seg(id)}/versions/${seg(versionId)}/outputs/${encodeURIComponent(name)}`, name),
    );
  }
  outputLocation(runId: string, name: string): Promise<OutputLocation> {
    const p = name.split("/").map(seg).join("/");
    return Promise.resolve(this.download(`/api/runs/${seg(runId)}/outputs/${p}`, name));
  }

  /** A file of the API that is saved by fetching it with the token. */
  private download(path: string, name: string): OutputLocation {
    const href = this.origin + path;
    const file = name.split("/").pop() || "output";
    const save = async () => {
      let response: Response;
      try {
        response = await fetch(href, { credentials: "omit", headers: this.auth() });
      } catch {
        throw unreachable();
      }
      if (!response.ok) throw errorFromResponse(response.status, parseBody(await response.text()));
      saveBlob(file, await response.blob());
    };
    return { kind: "download", href, name: file, save };
  }

  extract(source: FileSource, onProgress?: OnProgress): Promise<UploadedFile> {
    if (source.kind !== "file") {
      return Promise.reject(
        new ApiError("invalid_request", "A browser can only upload files, not paths."),
      );
    }
    // XMLHttpRequest, because fetch reports no upload progress.
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", this.origin + "/api/extracts");
      for (const [k, v] of Object.entries(this.auth())) xhr.setRequestHeader(k, v);
      xhr.responseType = "text";
      xhr.upload.onprogress = (e) => {
        if (e.lengthComputable && onProgress) onProgress(e.loaded / Math.max(e.total, 1));
      };
      xhr.onerror = () =>
        reject(new ApiError("network", "The upload failed: Maskflow cannot be reached."));
      xhr.onload = () => {
        let body: unknown;
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          body = undefined;
        }
        if (xhr.status >= 200 && xhr.status < 300 && Array.isArray(body) && body[0]) {
          resolve(body[0] as UploadedFile);
        } else {
          reject(errorFromResponse(xhr.status, body));
        }
      };
      const form = new FormData();
      form.append("file", source.file, source.file.name);
      xhr.send(form);
    });
  }

  onEvent(listener: (e: Event) => void): () => void {
    this.listeners.add(listener);
    this.connect();
    return () => {
      this.listeners.delete(listener);
    };
  }

  onConnected(listener: () => void): () => void {
    this.connectedListeners.add(listener);
    return () => {
      this.connectedListeners.delete(listener);
    };
  }

  onNativeDrop(): () => void {
    return () => {};
  }

  private connect() {
    if (this.socket) return;
    // The socket sends only seed 004's flow events unless asked: the Flows
    // page, the sidebar and notifications use `flow_turn` and `flow_status`.
    const url = this.origin.replace(/^http/, "ws") + "/api/events?events=" + UI_EXTRA_EVENTS.join(",");
    // A browser's WebSocket takes no headers: the token rides as a subprotocol.
    const protocols = this.token ? [WS_PROTOCOL, WS_TOKEN_PREFIX + this.token] : [WS_PROTOCOL];
    const socket = new WebSocket(url, protocols);
    this.socket = socket;
    socket.onopen = () => {
      this.retry = 0;
      for (const l of this.connectedListeners) l();
    };
    socket.onmessage = (m) => {
      let event: Event;
      try {
        event = JSON.parse(String(m.data)) as Event;
      } catch {
        return;
      }
      for (const l of this.listeners) l(event);
    };
    socket.onclose = () => {
      this.socket = null;
      if (this.listeners.size === 0) return;
      this.retry = Math.min(this.retry + 1, 6);
      setTimeout(() => this.connect(), 250 * 2 ** this.retry);
    };
  }
}
