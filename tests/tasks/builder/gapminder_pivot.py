import json
import sys

import pandas as pd

fields = json.load(open(sys.argv[1]))["fields"]
df = pd.read_csv(fields["gapminder"])

df["weighted"] = df["lifeExp"] * df["pop"]
sums = df.groupby(["continent", "year"])[["weighted", "pop"]].sum()
sums["life_expectancy"] = (sums["weighted"] / sums["pop"]).round(1)
out = sums["life_expectancy"].unstack("year")
out.columns = [str(c) for c in out.columns]
out.reset_index().to_csv("outputs/life_expectancy_by_continent.csv", index=False)
