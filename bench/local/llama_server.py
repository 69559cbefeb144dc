"""llama.cpp's own server (xllamacpp from PyPI) for bench/local, on loopback,
with the same settings the embedded bench uses: 2,048-token context, one
sequence, THREADS CPU threads.

usage: python3 llama_server.py MODEL.gguf PORT [THREADS]
"""
import sys
import threading

import xllamacpp as xlc

p = xlc.CommonParams()
p.model.path = sys.argv[1]
p.n_ctx = 2048
p.n_parallel = 1
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
p.cpuparams.n_threads = p.cpuparams_batch.n_threads = threads
p.port = int(sys.argv[2])
p.hostnames = ["127.0.0.1"]
p.use_jinja = True
p.model_alias = ["smollm2"]
srv = xlc.Server(p)
print("listening", flush=True)
threading.Event().wait()
