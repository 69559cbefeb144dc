"""The llama-server side of bench/local: streams the same prompt the
embedded bench answers (greedy, at most N tokens) from a running server and
prints one JSON line: time to first token and tokens per second after the
first, as the embedded side measures them.

usage: python3 client.py PORT [N_TOKENS]
"""
import http.client
import json
import sys
import time

PROMPT = "Write a long story about a lighthouse keeper and a storm."

port = int(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 256


def stream(max_tokens):
    body = json.dumps({
        "model": "smollm2",
        "messages": [{"role": "system", "content": "You are a helpful assistant."},
                     {"role": "user", "content": PROMPT}],
        "max_tokens": max_tokens, "temperature": 0, "stream": True,
        "stream_options": {"include_usage": True},
    })
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    start = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    stamps, tokens = [], None
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if chunk.get("usage"):
            tokens = chunk["usage"]["completion_tokens"]
        for c in chunk.get("choices", []):
            if c.get("delta", {}).get("content"):
                stamps.append(time.perf_counter() - start)
    conn.close()
    return stamps, tokens


stream(4)  # warm up, as the embedded side does
stamps, tokens = stream(n)
tokens = tokens or len(stamps)
first, last = stamps[0], stamps[-1]
tps = (tokens - 1) / (last - first) if last > first else 0.0
print(json.dumps({"engine": "llama-server", "tokens": tokens, "ttft_ms": round(first * 1000, 1),
                  "tokens_per_s": round(tps, 2)}))
