import json
import sys

import pandas as pd

fields = json.load(open(sys.argv[1]))["fields"]
df = pd.read_csv(fields["electricity"])

df["year"] = pd.to_datetime(df["year"]).dt.year
table = df.pivot_table(index="year", columns="source", values="net_generation", aggfunc="sum")
shares = table.div(table.sum(axis=1), axis=0).mul(100).round(1)
shares.columns = [str(c) for c in shares.columns]
shares.reset_index().to_csv("outputs/source_shares.csv", index=False)
