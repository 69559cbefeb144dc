#!/usr/bin/env python3
"""Soak benchmark (issue 19, point 5): many clients for minutes against a real
`maskflow serve --replay` on loopback.

Client kinds (each a thread with its own keep-alive connection):
  upload   POST /api/extracts, a realistic CSV (names, dates, amounts, prose);
           the upload joins no workflow, so it is one the expiry must remove.
  read     GET /api/workflows/{id}/versions/{vid}: a version with its extracts.
  message  POST /api/workflows/{id}/messages, answered by the replay back end
           (a new workflow every few messages, so histories stay short).
  ws       the /api/events WebSocket: connect, read the event frames for a
           while, then drop the connection mid-stream (half of the time
           without a close frame) and connect again.

Every few seconds it samples the server's RSS (/proc/PID/status) and the
data folder's size. After the load it stops the server, makes every upload
two hours old in the database (the shortest expiry setting is one hour, the
run is ten minutes), starts the server again — its start-up sweep removes
expired uploads — and measures the data folder once more.

With --upload-load it runs the uploads load of issue 29 instead (see
uploads.py): 8 clients uploading a 20 MB CSV in a loop, 32 listing
workflows, list p99 against its target.

Standard library only (the WebSocket client is the few lines it needs).
"""

import argparse
import base64
import http.client
import json
import os
import random
import signal
import socket
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

TOKEN = "soak-bench-token"
FIRST = ["Maria", "John", "Aiko", "Oluwaseun", "Grace", "Pedro", "Ingrid",
         "Wei", "Fatima", "Lars", "Priya", "Mateo", "Chloé", "Dmitri"]
LAST = ["Okafor", "Smith", "Tanaka", "Lindqvist", "Moreau", "García", "Chen",
        "Nowak", "Haddad", "O'Brien", "Kowalski", "Silva", "Nakamura"]
NOTES = [
    "Called twice about the late delivery; promised a refund by Friday.",
    "Prefers email, never before 9am. Moved to the Lyon office in March.",
    "Paid the invoice in two parts, the second one, \"after the audit\".",
    "New customer, referred by the Oslo team; asked for a quote on 40 seats.",
    "Complained about the invoice layout, wants amounts without VAT.",
    "Asked to close the account at the end of the quarter, see ticket 4471.",
]


def customers_csv(rows, seed):
    """A CSV as people keep them: quoted names, dates, amounts and prose."""
    rnd = random.Random(seed)
    out = ["customer_id,name,email,signup_date,last_order,amount_eur,city,notes"]
    for i in range(rows):
        first, last = rnd.choice(FIRST), rnd.choice(LAST)
        out.append('%d,"%s, %s",%s.%s@example.com,%04d-%02d-%02d,%02d/%02d/%04d,'
                   '"%s",%s,"%s"' % (
                       100000 + i, last, first, first.lower(),
                       last.lower().replace("'", ""),
                       rnd.randint(2015, 2025), rnd.randint(1, 12), rnd.randint(1, 28),
                       rnd.randint(1, 28), rnd.randint(1, 12), rnd.randint(2020, 2025),
                       f"{rnd.randint(10, 99999)}.{rnd.randint(0, 99):02d}".replace(".", ","),
                       rnd.choice(["Lyon", "Oslo", "Osaka", "Lagos", "Lima"]),
                       rnd.choice(NOTES).replace('"', '""')))
    return ("\n".join(out) + "\n").encode()


def replay_file(path, validators, clarifiers):
    """Replies for every message the run can send (the replay back end fails
    once a role's list is used up: that would show as errors)."""
    with open(path, "w") as f:
        json.dump({
            "validator": [{"feasible": True}] * validators,
            "clarifier": [{"needs_clarification": True,
                           "question": "Should rows without an amount be kept?"}] * clarifiers,
        }, f)


class Stats:
    """Latencies and errors per kind, shared by the client threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.lat = {}
        self.errors = {}
        self.samples = []
        self.extra = {"ws_frames": 0, "ws_sessions": 0}

    def ok(self, kind, seconds):
        with self.lock:
            self.lat.setdefault(kind, []).append(seconds)

    def err(self, kind, what):
        with self.lock:
            self.errors.setdefault(kind, []).append(what)

    def add(self, key, n):
        with self.lock:
            self.extra[key] += n


class Api:
    """One keep-alive HTTP/1.1 connection with the bearer token."""

    def __init__(self, port, timeout=120):
        self.port = port
        self.timeout = timeout
        self.conn = None

    def call(self, method, path, body=None, content_type="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            try:
                self.conn.request(method, path, body=body, headers={
                    "Authorization": f"Bearer {TOKEN}", "Content-Type": content_type})
                r = self.conn.getresponse()
                data = r.read()
                return r.status, data
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # A keep-alive connection the server closed: one retry on a new one.
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise RuntimeError("unreachable")


def multipart(filename, content):
    boundary = "soak" + os.urandom(8).hex()
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{filename}\"\r\nContent-Type: text/csv\r\n\r\n").encode()
    return head + content + f"\r\n--{boundary}--\r\n".encode(), \
        f"multipart/form-data; boundary={boundary}"


def timed(stats, kind, expect, fn):
    t = time.perf_counter()
    try:
        status, data = fn()
    except Exception as e:  # noqa: BLE001 - every failure is counted, by kind
        stats.err(kind, f"{type(e).__name__}: {e}")
        return None
    dt = time.perf_counter() - t
    if status != expect:
        stats.err(kind, f"{status}: {data[:200]!r}")
        return None
    stats.ok(kind, dt)
    return json.loads(data) if data else None


def uploader(port, stop, stats, n, pause):
    api, rnd = Api(port), random.Random(n)
    bodies = [customers_csv(1200, n * 100 + i) for i in range(4)]
    k = 0
    while not stop.is_set():
        body, ctype = multipart(f"customers_{n}_{k}.csv", bodies[k % len(bodies)])
        timed(stats, "upload", 200, lambda: api.call("POST", "/api/extracts", body, ctype))
        k += 1
        stop.wait(pause * rnd.uniform(0.5, 1.5))


def reader(port, stop, stats, target, pause):
    api, rnd = Api(port), random.Random()
    wf, vid = target
    while not stop.is_set():
        timed(stats, "read", 200,
              lambda: api.call("GET", f"/api/workflows/{wf}/versions/{vid}"))
        stop.wait(pause * rnd.uniform(0.5, 1.5))


# Without file_ids an extract may carry masked samples only.
EXTRACT = {"filename": "orders.csv", "columns": ["date", "amount"],
           "sample_rows": [["####-##-##", "$#,###.##"]], "row_count": 500}
ASKS = ["Sum the amounts per month and sort by month",
        "Keep every column",
        "Only the orders of last year",
        "Write the result as a CSV with a header"]


def messenger(port, stop, stats, pause, per_workflow):
    api, rnd = Api(port), random.Random()
    while not stop.is_set():
        created = timed(stats, "create_workflow", 201, lambda: api.call(
            "POST", "/api/workflows", {"file_extracts": [EXTRACT]}))
        if not created:
            stop.wait(1)
            continue
        path = f"/api/workflows/{created['workflow_id']}/messages"
        for i in range(per_workflow):
            if stop.is_set():
                break
            timed(stats, "message", 200,
                  lambda: api.call("POST", path, {"content": ASKS[i % len(ASKS)]}))
            stop.wait(pause * rnd.uniform(0.5, 1.5))


def ws_connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               f"Authorization: Bearer {TOKEN}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
               "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            raise ConnectionError("closed during the handshake")
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        raise ConnectionError(head.split(b"\r\n")[0].decode(errors="replace"))
    return s


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the server closed the socket")
        buf += chunk
    return buf


def ws_frame(s):
    """One server frame: (opcode, payload). Server frames are not masked."""
    b0, b1 = recv_exact(s, 2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack(">H", recv_exact(s, 2))[0]
    elif n == 127:
        n = struct.unpack(">Q", recv_exact(s, 8))[0]
    return b0 & 0x0F, recv_exact(s, n)


def ws_send(s, opcode, payload):
    mask = os.urandom(4)
    head = bytes([0x80 | opcode])
    n = len(payload)
    head += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
    s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def subscriber(port, stop, stats, session_seconds):
    rnd = random.Random()
    while not stop.is_set():
        t = time.perf_counter()
        try:
            s = ws_connect(port)
        except Exception as e:  # noqa: BLE001
            stats.err("ws_connect", f"{type(e).__name__}: {e}")
            stop.wait(1)
            continue
        stats.ok("ws_connect", time.perf_counter() - t)
        stats.add("ws_sessions", 1)
        end = time.monotonic() + session_seconds * rnd.uniform(0.5, 1.5)
        s.settimeout(0.5)
        try:
            while not stop.is_set() and time.monotonic() < end:
                try:
                    op, payload = ws_frame(s)
                except socket.timeout:
                    continue
                if op == 0x1:
                    json.loads(payload)  # every frame is one JSON event
                    stats.add("ws_frames", 1)
                elif op == 0x9:
                    ws_send(s, 0xA, payload)
                elif op == 0x8:
                    raise ConnectionError("the server closed the events socket")
            if rnd.random() < 0.5:
                ws_send(s, 0x8, struct.pack(">H", 1000))
        except Exception as e:  # noqa: BLE001
            stats.err("ws_stream", f"{type(e).__name__}: {e}")
        finally:
            s.close()  # the other half: dropped mid-stream without a close frame


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def folder_bytes(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except FileNotFoundError:
                pass  # removed between listing and measuring
    return total


def sampler(pid, home, stop, stats, every, t0):
    while True:
        stats.samples.append((time.monotonic() - t0, rss_kib(pid), folder_bytes(home)))
        if stop.wait(every):
            return


def start_server(binary, home, replay):
    env = dict(os.environ, MASKFLOW_HOME=home)
    p = subprocess.Popen([binary, "serve", "--port", "0", "--token", TOKEN,
                          "--replay", replay], env=env, stdout=subprocess.PIPE,
                         stderr=open(os.path.join(os.path.dirname(home), "serve.log"), "a"))
    line = p.stdout.readline().decode()
    port = int(line.strip().removeprefix("http://127.0.0.1:").split("/")[0])
    return p, port


def stop_server(p):
    p.send_signal(signal.SIGINT)
    try:
        p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def setup(port):
    api = Api(port)
    status, data = api.call("PUT", "/api/settings/storage", {"upload_expiry_hours": 1})
    assert status == 200, (status, data)
    body, ctype = multipart("customers.csv", customers_csv(2000, 7))
    status, data = api.call("POST", "/api/extracts", body, ctype)
    assert status == 200, (status, data)
    file_id = json.loads(data)[0]["file_id"]
    status, data = api.call("POST", "/api/workflows", {"file_ids": [file_id]})
    assert status == 201, (status, data)
    wf = json.loads(data)
    vid = wf.get("version_id") or wf["versions"][-1]["version_id"]
    return wf["workflow_id"], vid


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release/maskflow")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--uploaders", type=int, help="default 10, 8 with --upload-load")
    ap.add_argument("--readers", type=int, default=20)
    ap.add_argument("--messengers", type=int, default=10)
    ap.add_argument("--subscribers", type=int, default=10)
    ap.add_argument("--per-workflow", type=int, default=8, help="messages per new workflow")
    ap.add_argument("--warmup", type=float, default=60, help="seconds before 'after warm-up'")
    ap.add_argument("--keep", action="store_true", help="keep the data folder")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--upload-load", action="store_true",
                    help="uploads load instead: big uploads in a loop, clients listing workflows")
    ap.add_argument("--seconds", type=float, help="--upload-load: how long (120; QUICK=1: 30)")
    ap.add_argument("--upload-mb", type=float, default=20, help="--upload-load: the CSV's size")
    ap.add_argument("--listers", type=int, default=32, help="--upload-load: listing clients")
    ap.add_argument("--warmup-uploads", type=float, default=5,
                    help="--upload-load: seconds of uploads before listing starts")
    a = ap.parse_args()
    if a.upload_load:
        import uploads
        a.uploaders = 8 if a.uploaders is None else a.uploaders
        return uploads.run(a)
    a.uploaders = 10 if a.uploaders is None else a.uploaders

    work = tempfile.mkdtemp(prefix="maskflow-soak-")
    home = os.path.join(work, "home")
    replay = os.path.join(work, "replay.json")
    replay_file(replay, 10000, 60000)
    server, port = start_server(a.bin, home, replay)
    stats, stop, done_sampling = Stats(), threading.Event(), threading.Event()
    try:
        target = setup(port)
        t0 = time.monotonic()
        samp = threading.Thread(target=sampler, args=(server.pid, home, done_sampling, stats, 5, t0))
        samp.start()
        threads = (
            [threading.Thread(target=uploader, args=(port, stop, stats, i, 1.0))
             for i in range(a.uploaders)]
            + [threading.Thread(target=reader, args=(port, stop, stats, target, 0.1))
               for _ in range(a.readers)]
            + [threading.Thread(target=messenger, args=(port, stop, stats, 0.5, a.per_workflow))
               for _ in range(a.messengers)]
            + [threading.Thread(target=subscriber, args=(port, stop, stats, 60))
               for _ in range(a.subscribers)])
        for t in threads:
            t.start()
        time.sleep(a.minutes * 60)
        stop.set()
        for t in threads:
            t.join()
        time.sleep(5)  # one more sample with the load gone
        done_sampling.set()
        samp.join()
        alive = server.poll() is None
        stop_server(server)

        # Expiry: every upload two hours old, then a start-up sweep.
        db = sqlite3.connect(os.path.join(home, "maskflow.db"))
        before_rows = db.execute("SELECT count(*) FROM input_files").fetchone()[0]
        db.execute("UPDATE input_files SET created_at = "
                   "strftime('%Y-%m-%dT%H:%M:%fZ', created_at, '-2 hours')")
        db.commit()
        db.close()
        server, port = start_server(a.bin, home, replay)
        time.sleep(3)
        stop_server(server)
        db = sqlite3.connect(os.path.join(home, "maskflow.db"))
        after_rows = db.execute("SELECT count(*) FROM input_files").fetchone()[0]
        db.close()
        after_expiry = folder_bytes(home)
        by_kind = {d: folder_bytes(os.path.join(home, d)) for d in sorted(os.listdir(home))
                   if os.path.isdir(os.path.join(home, d))}
        report(a, stats, alive, before_rows, after_rows, after_expiry, by_kind, home)
    finally:
        stop.set()
        done_sampling.set()
        if server.poll() is None:
            server.kill()
        if not a.keep:
            subprocess.run(["rm", "-rf", work], check=False)


def report(a, stats, alive, before_rows, after_rows, after_expiry, by_kind, home):
    s = stats.samples
    start_rss, start_disk = s[0][1], s[0][2]
    warm = next((x for x in s if x[0] >= a.warmup), s[-1])
    loaded = [x for x in s if x[0] <= a.minutes * 60]
    end = loaded[-1]
    peak_disk = max(x[2] for x in s)
    after_warm = [x[1] for x in loaded if x[0] >= a.warmup]
    mib = lambda kib: kib / 1024  # noqa: E731
    mb = lambda b: b / 1e6  # noqa: E731
    print(f"\nsoak: {a.minutes:g} min, {a.uploaders} uploaders, {a.readers} readers, "
          f"{a.messengers} messengers, {a.subscribers} WebSocket subscribers "
          f"({a.uploaders + a.readers + a.messengers + a.subscribers} clients)")
    print(f"server alive at the end: {alive}")
    print("\n| kind | requests | errors | p50 | p99 | max |\n|---|---|---|---|---|---|")
    kinds = sorted(set(stats.lat) | set(stats.errors))
    for k in kinds:
        v = stats.lat.get(k, [])
        print(f"| {k} | {len(v)} | {len(stats.errors.get(k, []))} | "
              f"{pct(v, .5) * 1000:.1f} ms | {pct(v, .99) * 1000:.1f} ms | "
              f"{(max(v) if v else float('nan')) * 1000:.1f} ms |")
    print(f"\nWebSocket: {stats.extra['ws_sessions']} sessions, "
          f"{stats.extra['ws_frames']} event frames received")
    for k, errs in stats.errors.items():
        print(f"errors of {k} (first 3 of {len(errs)}): {errs[:3]}")
    print("\n| RSS | MiB |\n|---|---|")
    print(f"| start (idle, before load) | {mib(start_rss):.1f} |")
    print(f"| after warm-up ({a.warmup:g} s) | {mib(warm[1]):.1f} |")
    if after_warm:
        print(f"| min / max after warm-up | {mib(min(after_warm)):.1f} / {mib(max(after_warm)):.1f} |")
        third = len(after_warm) // 3 or 1
        print(f"| mean, first / last third after warm-up | "
              f"{mib(statistics.mean(after_warm[:third])):.1f} / "
              f"{mib(statistics.mean(after_warm[-third:])):.1f} |")
    print(f"| end of load | {mib(end[1]):.1f} |")
    print("\n| data folder | MB |\n|---|---|")
    print(f"| start | {mb(start_disk):.1f} |")
    print(f"| peak | {mb(peak_disk):.1f} |")
    print(f"| end of load | {mb(end[2]):.1f} |")
    print(f"| after expiry (restart sweep) | {mb(after_expiry):.1f} |")
    print(f"\nupload rows: {before_rows} before expiry, {after_rows} after")
    print("after expiry, by folder (MB): " + ", ".join(
        f"{k} {mb(v):.2f}" for k, v in by_kind.items())
        + f"; files at the top: {mb(after_expiry - sum(by_kind.values())):.2f}")
    print("\nRSS (MiB) and data folder (MB) every 30 s:")
    for x in s[::6]:
        print(f"  t={x[0]:6.0f} s  rss={mib(x[1]):7.1f}  disk={mb(x[2]):8.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"latencies": {k: {"n": len(v), "p50": pct(v, .5), "p99": pct(v, .99)}
                                     for k, v in stats.lat.items()},
                       "errors": {k: v[:20] for k, v in stats.errors.items()},
                       "samples": s, "after_expiry": after_expiry,
                       "by_kind": by_kind, "home": home}, f)


if __name__ == "__main__":
    sys.exit(main())
