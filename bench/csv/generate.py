"""Writes a CSV of about SIZE bytes with quoted fields, escaped quotes and
embedded newlines, and prints its exact number of data records.

usage: generate.py OUT SIZE
"""
import random
import sys

out, size = sys.argv[1], int(sys.argv[2])
rng = random.Random(42)
first = ["John", "Jane", "Élodie", "Ana", "Wei", "Olu", "Sam"]
last = ["Smith", "Doe", "Müller", "García", "Zhang", "Okafor", "Lee"]
rows = []
for i in range(5000):
    note = rng.choice([
        "ok",
        "said \"\"hi\"\", then left",
        "line one\nline two",
        "multi\r\nline, with comma",
        "",
    ])
    rows.append(
        f'{i},"{rng.choice(first)} {rng.choice(last)}",2024-{rng.randint(1,12):02d}-{rng.randint(1,28):02d},'
        f'"${rng.randint(1,99999):,}.{rng.randint(0,99):02d}","{note}",PROD-{rng.randint(100000,999999)}\r\n'
    )
block = "".join(rows).encode("utf-8")
header = b"id,customer,date,amount,note,product\r\n"
records = 0
written = 0
with open(out, "wb") as f:
    f.write(header)
    written += len(header)
    while written + len(block) <= size:
        f.write(block)
        written += len(block)
        records += len(rows)
print(records)
