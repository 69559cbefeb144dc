import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

fields = json.load(open(sys.argv[1]))["fields"]
df = pd.read_csv(fields["stocks"])
df["date"] = pd.to_datetime(df["date"], format="%b %d %Y")

fig, ax = plt.subplots(figsize=(10, 5))
for symbol, part in df.sort_values("date").groupby("symbol"):
    ax.plot(part["date"], part["price"], label=symbol)
ax.set_xlabel("date")
ax.set_ylabel("price")
ax.legend()
fig.tight_layout()
fig.savefig("outputs/prices.png")

df["year"] = df["date"].dt.year
table = df.pivot_table(index="symbol", columns="year", values="price", aggfunc="mean").round(2)
table.columns = [str(c) for c in table.columns]
table.reset_index().to_csv("outputs/yearly_average.csv", index=False)
