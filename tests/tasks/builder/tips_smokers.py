import json
import sys

import pandas as pd

fields = json.load(open(sys.argv[1]))["fields"]
df = pd.read_csv(fields["tips"])

smokers = df[df["smoker"].astype(str).str.strip() == "Yes"].copy()
smokers["tip_pct"] = smokers["tip"] / smokers["total_bill"] * 100
out = (
    smokers.groupby("day")
    .agg(tables=("tip_pct", "size"), avg_tip_pct=("tip_pct", "mean"))
    .round({"avg_tip_pct": 2})
    .reset_index()
)
out.to_csv("outputs/smoker_tips.csv", index=False)
