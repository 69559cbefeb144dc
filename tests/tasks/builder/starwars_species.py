import json
import sys

import pandas as pd

fields = json.load(open(sys.argv[1]))["fields"]
df = pd.read_csv(fields["characters"])

df = df[df["species"].notna()]
out = (
    df.groupby("species")
    .agg(
        characters=("name", "size"),
        avg_height=("height", "mean"),
        avg_mass=("mass", "mean"),
        missing_mass=("mass", lambda s: int(s.isna().sum())),
    )
    .reset_index()
)
out = out[out["characters"] >= 2].round({"avg_height": 1, "avg_mass": 1})
out = out.sort_values(["characters", "species"], ascending=[False, True])
out.to_csv("outputs/species_summary.csv", index=False)
