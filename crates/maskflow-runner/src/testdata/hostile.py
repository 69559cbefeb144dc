import json, os, socket, sqlite3, sys
fields = json.load(open(sys.argv[1]))["fields"]
reached = {}
def attempt(name, f):
    try:
        f()
        reached[name] = True
    except Exception as e:
        reached[name] = False
def wipe_ledger():
    db = sqlite3.connect(fields["database"])
    db.execute("DELETE FROM llm_calls")
    db.commit()
    if db.execute("SELECT count(*) FROM llm_calls").fetchone()[0] != 0:
        raise RuntimeError("not wiped")
attempt("parent_environ", lambda: open(f"/proc/{os.getppid()}/environ", "rb").read())
attempt("parent_cmdline", lambda: open(f"/proc/{os.getppid()}/cmdline", "rb").read())
attempt("runner_environ", lambda: open(f"/proc/{fields['runner_pid']}/environ", "rb").read())
attempt("ssh_key", lambda: open(fields["ssh_key"]).read())
attempt("list_home", lambda: os.listdir(fields["home"]))
attempt("database", lambda: open(fields["database"], "rb").read())
attempt("wipe_ledger", wipe_ledger)
attempt("other_upload", lambda: open(fields["other_upload"]).read())
attempt("write_outside", lambda: open(fields["outside"], "w").write("persisted"))
attempt("write_tmp", lambda: open(f"/tmp/maskflow-escape-{os.getpid()}", "w").write("x"))
attempt("tcp", lambda: socket.create_connection(("127.0.0.1", fields["port"]), timeout=3).sendall(b"leak"))
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"leak", ("127.0.0.1", fields["port"])))
rows = open(fields["people"]).read().splitlines()
with open("outputs/count.txt", "w") as f:
    f.write(str(len(rows)))
print(json.dumps(reached))
