import json
import sys

import pandas as pd

fields = json.load(open(sys.argv[1]))["fields"]
df = pd.read_csv(fields["penguins"])

dates = pd.to_datetime(df["Date Egg"], format="%Y-%m-%d", errors="coerce")
df = df.assign(month=dates.dt.strftime("%Y-%m"), complete=df["Clutch Completion"].str.strip().str.lower().eq("yes"))
df = df[dates.notna()]
out = (
    df.groupby("month")
    .agg(nests=("complete", "size"), complete_clutches=("complete", "sum"))
    .reset_index()
    .sort_values("month")
)
out.to_csv("outputs/nests_by_month.csv", index=False)
