"""The same shape in LangGraph: a loop of two trivial nodes ("work", then a
"check" that routes back to "work" until the last iteration), run with
LangGraph's SQLite checkpointer (a checkpoint per super-step) and, for
reference, without one. Prints one JSON line per configuration."""
import json, os, sqlite3, sys, tempfile, time
from typing import TypedDict

from langgraph.graph import StateGraph, END
from langgraph.checkpoint.sqlite import SqliteSaver


class S(TypedDict):
    n: int
    out: dict


def work(state: S):
    return {"out": {"n": 1}}


def check(state: S):
    return {"n": state["n"] + 1}


def build(iterations):
    g = StateGraph(S)
    g.add_node("work", work)
    g.add_node("check", check)
    g.set_entry_point("work")
    g.add_edge("work", "check")
    g.add_conditional_edges("check", lambda s: END if s["n"] >= iterations else "work")
    return g


def run(steps, checkpointer, label, sync=None):
    iterations = steps // 2
    graph = build(iterations).compile(checkpointer=checkpointer)
    config = {"configurable": {"thread_id": "t1"}, "recursion_limit": steps + 10}
    t = time.perf_counter()
    final = graph.invoke({"n": 0, "out": {}}, config)
    seconds = time.perf_counter() - t
    assert final["n"] == iterations, final
    print(json.dumps({"engine": label, "synchronous": sync, "steps": iterations * 2, "seconds": round(seconds, 4),
                      "ms_per_step": round(seconds * 1000 / (iterations * 2), 4)}), flush=True)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    run(steps, None, "langgraph (no checkpointer)")
    with tempfile.TemporaryDirectory() as d:
        conn = sqlite3.connect(os.path.join(d, "lg.db"), check_same_thread=False)
        sync = conn.execute("PRAGMA synchronous").fetchone()[0]
        saver = SqliteSaver(conn)
        run(steps, saver, "langgraph + SqliteSaver", {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(sync, str(sync)))


if __name__ == "__main__":
    main()
