import json
import sys

import pandas as pd

fields = json.load(open(sys.argv[1]))["fields"]
df = pd.read_csv(fields["deaths"])

places = (
    df.groupby("neighborhood")
    .agg(deaths=("age", "size"), average_age=("age", "mean"))
    .round({"average_age": 1})
    .reset_index()
    .sort_values(["deaths", "neighborhood"], ascending=[False, True])
)
kinds = pd.crosstab(df["type"], df["gender"]).reset_index()
with pd.ExcelWriter("outputs/riots_summary.xlsx") as book:
    places.to_excel(book, sheet_name="neighborhoods", index=False)
    kinds.to_excel(book, sheet_name="types", index=False)
