import json
import sys

import pandas as pd

fields = json.load(open(sys.argv[1]))["fields"]
df = pd.read_csv(fields["weather"])

df["date"] = pd.to_datetime(df["date"], format="%Y/%m/%d")
df["month"] = df["date"].dt.to_period("M").astype(str)
totals = df.groupby("month").agg(
    total_precipitation=("precipitation", "sum"), avg_temp_max=("temp_max", "mean")
)
totals["total_precipitation"] = totals["total_precipitation"].round(1)
totals["avg_temp_max"] = totals["avg_temp_max"].round(1)
kinds = pd.crosstab(df["month"], df["weather"])
out = totals.join(kinds).fillna(0).reset_index()
out.to_csv("outputs/monthly_weather.csv", index=False)
