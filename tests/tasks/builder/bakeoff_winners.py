import json
import sys

import pandas as pd

fields = json.load(open(sys.argv[1]))["fields"]
bakers = pd.read_csv(fields["bakers"])
ratings = pd.read_csv(fields["ratings"])

winners = bakers.loc[bakers["series_winner"] == 1, ["series", "baker_full", "age", "occupation"]]
viewers = (
    ratings.groupby("series", as_index=False)["viewers_7day"]
    .mean()
    .rename(columns={"viewers_7day": "avg_viewers_7day"})
)
viewers["avg_viewers_7day"] = viewers["avg_viewers_7day"].round(2)
out = winners.merge(viewers, on="series", how="left").sort_values("series")
out.to_csv("outputs/series_winners.csv", index=False)
