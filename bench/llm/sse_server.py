"""A local OpenAI-compatible chat endpoint that streams a fixed reply of
CHUNKS server-sent events as fast as it can, so that what is measured is the
client's own cost. usage: sse_server.py PORT CHUNKS"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, CHUNKS = int(sys.argv[1]), int(sys.argv[2])
events = []
for i in range(CHUNKS):
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "bench",
             "choices": [{"index": 0, "delta": {"content": f"word{i} "}, "finish_reason": None}]}
    events.append(f"data: {json.dumps(chunk)}\n\n")
events.append('data: {"id":"c","object":"chat.completion.chunk","model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')
events.append("data: [DONE]\n\n")
BODY = "".join(events).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else delayed ACKs, not the clients, set the pace

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


print("listening", flush=True)
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
