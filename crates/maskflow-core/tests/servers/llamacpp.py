"""A real llama.cpp server (xllamacpp) on loopback for the protocol tests.

usage: python3 llamacpp.py MODEL.gguf PORT
Serves OpenAI /v1/chat/completions and Anthropic /v1/messages on 127.0.0.1.
"""
import os
import sys
import threading

import xllamacpp as xlc

p = xlc.CommonParams()
p.model.path = sys.argv[1]
p.n_ctx = 2048
p.n_parallel = 1
# Both cores of the test machine: the roles' replies are decoded one token
# at a time, and the test binaries run one after another.
p.cpuparams.n_threads = p.cpuparams_batch.n_threads = min(2, os.cpu_count() or 1)
p.port = int(sys.argv[2])
p.hostnames = ["127.0.0.1"]
p.use_jinja = True
p.model_alias = ["smollm2"]
srv = xlc.Server(p)
print("listening", flush=True)
threading.Event().wait()
