import json
import sys

import pandas as pd

fields = json.load(open(sys.argv[1]))["fields"]
df = pd.read_csv(fields["penguins"])

mass, flipper = "Body Mass (g)", "Flipper Length (mm)"
df = df.dropna(subset=["Sex", mass, flipper])
out = (
    df.groupby(["Species", "Sex"])
    .agg(penguins=(mass, "size"), mean_body_mass_g=(mass, "mean"), mean_flipper_length_mm=(flipper, "mean"))
    .round(1)
    .reset_index()
    .rename(columns={"Species": "species", "Sex": "sex"})
)
out.to_csv("outputs/penguin_means.csv", index=False)
