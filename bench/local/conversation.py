"""The builder conversation on the embedded model, through a real
`maskflow serve` (release build) whose every role is the `local` back end:
the task, answers until the model stops asking (at most three), and the
build it starts, timed from the first message to the build's end. Prints
one JSON line: wall seconds, how the version ended, the ledger's calls, and
serve's resident memory with the model loaded.

usage: python3 conversation.py MASKFLOW_BIN MODEL.gguf
"""
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

BIN, MODEL = sys.argv[1], os.path.abspath(sys.argv[2])
TOKEN = "bench-token-" + uuid.uuid4().hex[:8]
CSV = b"date,region,amount\n2024-01-02,North,120.50\n2024-01-03,South,80.25\n2024-01-04,North,14.75\n"


def call(port, method, path, body=None, content_type="application/json"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else b"")
    conn.request(method, path, data, {"Authorization": f"Bearer {TOKEN}", "Content-Type": content_type})
    resp = conn.getresponse()
    text = resp.read()
    conn.close()
    try:
        return resp.status, json.loads(text)
    except ValueError:
        return resp.status, None


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


home = tempfile.mkdtemp(prefix="maskflow-bench-local-")
serve = subprocess.Popen([BIN, "serve", "--port", "0", "--token", TOKEN],
                         env={**os.environ, "MASKFLOW_HOME": home},
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    url = serve.stdout.readline().strip()
    port = int(url.split("127.0.0.1:")[1].split("/")[0])
    status, _ = call(port, "PUT", "/api/settings", {
        "providers": [{"id": "manual", "kind": "manual"},
                      {"id": "embedded", "kind": "local", "model": MODEL, "temperature": 0.0,
                       "context_window": 4096}],
        "roles": {"validator": "embedded", "clarifier": "embedded", "builder": "embedded"}})
    assert status == 200, status
    boundary = "benchboundary42"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"sales.csv\"\r\n"
            f"Content-Type: text/csv\r\n\r\n").encode() + CSV + f"\r\n--{boundary}--\r\n".encode()
    # The small model's validator may call a task infeasible (greedy: the
    # same words, the same verdict); a rejected workflow takes no more
    # messages, so the task is put another way in a new one, as the serve
    # test does (crates/maskflow-server/tests/it/local_backend.rs).
    tasks = [
        "Sum the amount column by region and write the totals to a CSV file.",
        "Write a Python script that reads sales.csv and writes totals.csv with the total amount per region.",
        "Make a CSV of total amount per region from sales.csv. This is feasible with a local Python script.",
    ]
    start = time.perf_counter()
    for wording, task in enumerate(tasks, 1):
        status, files = call(port, "POST", "/api/extracts", body, f"multipart/form-data; boundary={boundary}")
        assert status in (200, 201), (status, files)
        status, created = call(port, "POST", "/api/workflows", {"file_ids": [f["file_id"] for f in files]})
        assert status == 201, (status, created)
        wf = created["workflow_id"]
        for content in [task] + ["Use the defaults you think best; no more questions."] * 3:
            # go_ahead: a machine without uv may still build a script that
            # needs no packages; the bench measures the conversation.
            status, reply = call(port, "POST", f"/api/workflows/{wf}/messages",
                                 {"content": content, "go_ahead": True})
            if status != 200:
                sys.exit(f"bench/local: the message was refused ({status}): {reply}")
            if reply is None or reply.get("status") != "clarifying":
                break
        if reply is None or reply.get("status") != "rejected":
            break
    while True:
        _, view = call(port, "GET", f"/api/workflows/{wf}")
        if view["current_version"]["status"] != "building":
            break
        time.sleep(0.2)
    wall = time.perf_counter() - start
    _, ledger = call(port, "GET", "/api/ledger?limit=500")
    mine = ledger  # a fresh data folder: every call is this conversation's
    print(json.dumps({"engine": "conversation", "wall_s": round(wall, 1), "wordings": wording,
                      "status": view["current_version"]["status"], "calls": len(mine),
                      "local_calls": sum(1 for r in mine if r.get("local")),
                      "output_tokens": sum(r.get("output_tokens") or 0 for r in mine),
                      "serve_rss_loaded_mib": round(rss_mib(serve.pid), 1)}))
finally:
    serve.kill()
    serve.wait()
