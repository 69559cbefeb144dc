import json
import sys

import pandas as pd

fields = json.load(open(sys.argv[1]))["fields"]
sheets = pd.read_excel(fields["workbook"], sheet_name=None)

rows = []
for continent, df in sheets.items():
    for year, part in df.groupby("year"):
        richest = part.loc[part["gdpPercap"].idxmax()]
        rows.append(
            {
                "continent": continent,
                "year": int(year),
                "total_pop": int(part["pop"].sum()),
                "richest_country": richest["country"],
            }
        )
pd.DataFrame(rows).sort_values(["continent", "year"]).to_csv("outputs/continent_years.csv", index=False)
