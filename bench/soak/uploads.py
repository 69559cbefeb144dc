"""Soak under upload load (issue 29, point 4): does the API stay responsive
while large files are being uploaded and extracted?

  upload  8 clients, each its own process (so their sending does not hold
          the listers' interpreter lock), POST /api/extracts of a ~20 MB CSV
          with realistic columns (quoted "Last, First" names, e-mails, two
          date formats, amounts with decimal commas, a city, prose notes),
          in a loop with no pause. The stored copy is removed from the data
          folder after each answer, so a long run does not fill the disk.
  list    32 clients (threads) listing workflows, GET /api/workflows, about
          10 times a second each; the server holds 20 workflows.

Reports p50/p99/max per kind and the target line
`TARGET<TAB>list p99 under 8 uploaders<TAB>…<TAB>< 50 ms<TAB>met|missed`.
Run through `soak.py --upload-load` (see bench/soak/README.md).
"""

import multiprocessing
import os
import random
import shutil
import tempfile
import threading
import time

import soak

TARGET_MS = 50.0


def big_csv(path, megabytes, seed):
    """Writes the ~`megabytes` MB CSV once; rows as soak.customers_csv makes them."""
    with open(path, "wb") as f:
        chunk, written, i = 5000, 0, 0
        while written < megabytes * 1_000_000:
            rows = soak.customers_csv(chunk, seed + i)
            if i:
                rows = rows.split(b"\n", 1)[1]  # the header once
            f.write(rows)
            written += len(rows)
            i += 1


def upload_body(path):
    with open(path, "rb") as f:
        return soak.multipart(os.path.basename(path), f.read())


def uploader(port, home, csv_path, stop, results):
    """One uploading process: uploads in a loop until `stop`; sends
    (seconds, error or None) per upload."""
    body, ctype = upload_body(csv_path)
    # Uploads past the extraction slots wait their turn: minutes on a slow build.
    api = soak.Api(port, timeout=900)
    while not stop.is_set():
        t = time.perf_counter()
        try:
            status, data = api.call("POST", "/api/extracts", body, ctype)
        except Exception as e:  # noqa: BLE001 - counted as an error
            results.put((time.perf_counter() - t, f"{type(e).__name__}: {e}"))
            continue
        dt = time.perf_counter() - t
        if status != 200:
            results.put((dt, f"{status}: {data[:200]!r}"))
            continue
        results.put((dt, None))
        for f in soak.json.loads(data):
            shutil.rmtree(os.path.join(home, "files", f["file_id"]), ignore_errors=True)


def lister(port, stop, stats, pause):
    api, rnd = soak.Api(port), random.Random()
    while not stop.is_set():
        soak.timed(stats, "list", 200, lambda: api.call("GET", "/api/workflows"))
        stop.wait(pause * rnd.uniform(0.5, 1.5))


def run(a):
    """The upload-load mode of soak.py; `a` holds its parsed arguments."""
    seconds = a.seconds if a.seconds else (30 if os.environ.get("QUICK") == "1" else 120)
    work = tempfile.mkdtemp(prefix="maskflow-soak-uploads-")
    home = os.path.join(work, "home")
    replay = os.path.join(work, "replay.json")
    soak.replay_file(replay, 10, 10)
    csv_path = os.path.join(work, "customers_20mb.csv")
    big_csv(csv_path, a.upload_mb, 29)
    server, port = soak.start_server(a.bin, home, replay)
    ctx = multiprocessing.get_context("spawn")
    stop_procs, results = ctx.Event(), ctx.Queue()
    stats, stop = soak.Stats(), threading.Event()
    procs, threads = [], []
    try:
        api = soak.Api(port)
        for _ in range(20):
            status, data = api.call("POST", "/api/workflows", {"file_extracts": [soak.EXTRACT]})
            assert status == 201, (status, data)
        procs = [ctx.Process(target=uploader, args=(port, home, csv_path, stop_procs, results))
                 for _ in range(a.uploaders)]
        for p in procs:
            p.start()
        time.sleep(a.warmup_uploads)  # every uploader sending before listing starts
        threads = [threading.Thread(target=lister, args=(port, stop, stats, 0.1))
                   for _ in range(a.listers)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        while time.monotonic() - t0 < seconds:
            time.sleep(0.5)
            drain(results, stats)
        stop.set()
        for t in threads:
            t.join()
        stop_procs.set()
        deadline = time.monotonic() + 120
        while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
            drain(results, stats)
            time.sleep(0.2)
        drain(results, stats)
        alive = server.poll() is None
    finally:
        stop.set()
        stop_procs.set()
        for p in procs:
            if p.is_alive():
                p.kill()
        soak.stop_server(server)
        shutil.rmtree(work, ignore_errors=True)
    report(a, seconds, stats, alive)


def drain(results, stats):
    while True:
        try:
            dt, err = results.get_nowait()
        except Exception:  # noqa: BLE001 - queue.Empty from another module
            return
        if err:
            stats.err("upload", err)
        else:
            stats.ok("upload", dt)


def report(a, seconds, stats, alive):
    print(f"\nuploads load: {seconds:g} s, {a.uploaders} uploaders of a {a.upload_mb:g} MB CSV "
          f"(no pause), {a.listers} clients listing workflows; server alive at the end: {alive}")
    print("\n| kind | requests | errors | p50 | p99 | max |\n|---|---|---|---|---|---|")
    for k in ("list", "upload"):
        v = stats.lat.get(k, [])
        print(f"| {k} | {len(v)} | {len(stats.errors.get(k, []))} | "
              f"{soak.pct(v, .5) * 1000:.1f} ms | {soak.pct(v, .99) * 1000:.1f} ms | "
              f"{(max(v) if v else float('nan')) * 1000:.1f} ms |")
    for k, errs in stats.errors.items():
        print(f"errors of {k} (first 3 of {len(errs)}): {errs[:3]}")
    lists = stats.lat.get("list", [])
    p99 = soak.pct(lists, .99) * 1000
    ok = bool(lists) and p99 < TARGET_MS and not stats.errors and alive
    print(f"TARGET\tlist p99 under {a.uploaders} uploaders\t{p99:.1f} ms\t< {TARGET_MS:g} ms\t"
          f"{'met' if ok else 'missed'}")
