"""The task-success suite's expected outputs, computed independently with
pandas on the raw files of data/, and the comparison with what a built
script wrote.

    python expected.py check ROOT TASK_ID...

checks ROOT/TASK_ID/ for each task: exits 0 when every output of every
task matches (numbers within a rounding tolerance, rows in any order unless
the request asked for one), else 1 with what differs.

    python expected.py facts

prints, as JSON, what the prompt assertions need of each file in data/:
its cell values of 4 characters or more as written, but for Maskflow's own
words for a missing value (the needles no request may carry) and each
column's count of empty cells. Written apart from the recorded builder scripts in
builder/, and on purpose in another way where pandas allows, so a wrong
script cannot agree with its own mistake.
"""

import io
import json
import sys
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parent / "data"


def raw(name, **kw):
    return pd.read_csv(DATA / name, **kw)


def bakeoff_winners():
    bakers = raw("bakers.csv")
    ratings = raw("ratings.csv")
    winners = bakers[bakers["series_winner"].astype(bool)].set_index("series")
    viewers = ratings.pivot_table(index="series", values="viewers_7day", aggfunc="mean")
    table = winners[["baker_full", "age", "occupation"]].join(viewers["viewers_7day"])
    table = table.rename(columns={"viewers_7day": "avg_viewers_7day"}).reset_index()
    return {"series_winners.csv": (table, ["series"], ("series", "up"))}


def penguin_means():
    p = raw("penguins_raw.csv")
    mass, flipper = p["Body Mass (g)"], p["Flipper Length (mm)"]
    keep = p["Sex"].notna() & mass.notna() & flipper.notna()
    p = p[keep]
    rows = []
    for (species, sex), g in p.groupby(["Species", "Sex"]):
        rows.append([species, sex, len(g), g["Body Mass (g)"].sum() / len(g),
                     g["Flipper Length (mm)"].sum() / len(g)])
    table = pd.DataFrame(rows, columns=["species", "sex", "penguins", "mean_body_mass_g",
                                        "mean_flipper_length_mm"])
    return {"penguin_means.csv": (table, ["species", "sex"], None)}


def penguin_nests():
    p = raw("penguins_raw.csv", dtype=str)
    month = p["Date Egg"].str.slice(0, 7)
    complete = (p["Clutch Completion"] == "Yes").astype(int)
    table = (pd.DataFrame({"month": month, "complete_clutches": complete})
             .groupby("month").agg(nests=("complete_clutches", "count"),
                                   complete_clutches=("complete_clutches", "sum"))
             .reset_index())
    return {"nests_by_month.csv": (table, ["month"], None)}


def weather_monthly():
    w = raw("seattle-weather.csv", dtype={"date": str})
    w["month"] = w["date"].str.replace("/", "-").str.slice(0, 7)
    table = w.pivot_table(index="month", values=["precipitation", "temp_max"],
                          aggfunc={"precipitation": "sum", "temp_max": "mean"})
    table = table.rename(columns={"precipitation": "total_precipitation",
                                  "temp_max": "avg_temp_max"})
    counts = w.groupby(["month", "weather"]).size().unstack(fill_value=0)
    table = table.join(counts).reset_index()
    return {"monthly_weather.csv": (table, ["month"], None)}


def gapminder_pivot():
    g = raw("gapminder.csv")
    table = {}
    for (continent, year), part in g.groupby(["continent", "year"]):
        value = (part["lifeExp"] * part["pop"] / part["pop"].sum()).sum()
        table.setdefault(continent, {})[str(year)] = value
    frame = pd.DataFrame.from_dict(table, orient="index")
    frame.index.name = "continent"
    return {"life_expectancy_by_continent.csv": (frame.reset_index(), ["continent"], None)}


def tips_smokers():
    t = raw("tips.csv")
    t = t.query("smoker == 'Yes'")
    pct = t["tip"].div(t["total_bill"]).mul(100)
    table = pd.DataFrame({"tables": t.groupby("day").size(),
                          "avg_tip_pct": pct.groupby(t["day"]).mean()}).reset_index()
    return {"smoker_tips.csv": (table, ["day"], None)}


def starwars_species():
    s = raw("starwars.csv")
    s = s.dropna(subset=["species"])
    sizes = s["species"].value_counts()
    s = s[s["species"].isin(sizes[sizes >= 2].index)]
    by = s.groupby("species")
    table = pd.DataFrame({"characters": by.size(), "avg_height": by["height"].mean(),
                          "avg_mass": by["mass"].mean(),
                          "missing_mass": by["mass"].apply(lambda m: m.isna().sum())})
    return {"species_summary.csv": (table.reset_index(), ["species"], ("characters", "down"))}


def gapminder_workbook():
    # From the flat file the workbook was made from, not from the workbook.
    g = raw("gapminder.csv")
    idx = g.groupby(["continent", "year"])["gdpPercap"].idxmax()
    richest = g.loc[idx, ["continent", "year", "country"]].rename(columns={"country": "richest_country"})
    pops = g.groupby(["continent", "year"], as_index=False)["pop"].sum().rename(columns={"pop": "total_pop"})
    table = pops.merge(richest, on=["continent", "year"])
    return {"continent_years.csv": (table, ["continent", "year"], None)}


def stocks_chart():
    s = raw("stocks.csv")
    s["year"] = s["date"].str[-4:]
    table = s.groupby(["symbol", "year"])["price"].mean().unstack("year").reset_index()
    table.columns.name = None
    return {"yearly_average.csv": (table, ["symbol"], None), "prices.png": "png"}


def riots_workbook():
    d = raw("la-riots.csv")
    places = d.groupby("neighborhood").agg(deaths=("gender", "count"), average_age=("age", "mean")).reset_index()
    kinds = d.pivot_table(index="type", columns="gender", values="age", aggfunc="size", fill_value=0).reset_index()
    kinds.columns.name = None
    return {"riots_summary.xlsx": {"neighborhoods": (places, ["neighborhood"], ("deaths", "down")),
                                   "types": (kinds, ["type"], None)}}


def iowa_share():
    e = raw("iowa-electricity.csv")
    e["year"] = e["year"].str[:4].astype(int)
    totals = e.groupby("year")["net_generation"].transform("sum")
    e["share"] = e["net_generation"] / totals * 100
    table = e.pivot(index="year", columns="source", values="share").reset_index()
    table.columns.name = None
    return {"source_shares.csv": (table, ["year"], None)}


def through_csv(frame):
    """The frame as it reads back from CSV, so types compare as the output's."""
    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))


def compare(label, actual, expected, keys, order):
    actual = actual.rename(columns=lambda c: str(c).strip())
    expected = through_csv(expected)
    if sorted(actual.columns) != sorted(expected.columns):
        return [f"{label}: columns {list(actual.columns)}, expected {list(expected.columns)}"]
    problems = []
    if order is not None:
        column, way = order
        values = actual[column]
        ok = values.is_monotonic_increasing if way == "up" else values.is_monotonic_decreasing
        if not ok:
            problems.append(f"{label}: rows not in {way}ward order of {column}: {values.tolist()}")
    actual = actual[list(expected.columns)].sort_values(keys).reset_index(drop=True)
    expected = expected.sort_values(keys).reset_index(drop=True)
    try:
        # Half a unit of the coarsest rounding asked for (1 decimal).
        pd.testing.assert_frame_equal(actual, expected, check_dtype=False, check_exact=False,
                                      rtol=0, atol=0.051)
    except AssertionError as e:
        problems.append(f"{label}: {e}")
    return problems


def check(task, outputs):
    problems = []
    for name, want in globals()[task]().items():
        path = outputs / name
        if not path.is_file():
            problems.append(f"{name}: not written")
        elif want == "png":
            head = path.read_bytes()[:8]
            if head != b"\x89PNG\r\n\x1a\n" or path.stat().st_size < 2000:
                problems.append(f"{name}: not a PNG chart ({path.stat().st_size} bytes)")
        elif isinstance(want, dict):
            sheets = pd.read_excel(path, sheet_name=None)
            for sheet, (frame, keys, order) in want.items():
                if sheet not in sheets:
                    problems.append(f"{name}: no sheet {sheet!r} (has {list(sheets)})")
                else:
                    problems += compare(f"{name}[{sheet}]", sheets[sheet], frame, keys, order)
        else:
            frame, keys, order = want
            problems += compare(name, pd.read_csv(path), frame, keys, order)
    return problems


# Maskflow's words for a missing value (maskflow-extractors'
# profile/classify.rs, PLACEHOLDERS): the profile names a placeholder by
# Maskflow's own spelling of it, so a cell that is one is not a needle.
PLACEHOLDERS = {"n/a", "na", "n.a.", "-", "--", "null", "none", "nan", "nil",
                "not available", "unknown", "missing", "?", "#n/a"}


def facts():
    out = {}
    for path in sorted(DATA.iterdir()):
        if path.suffix == ".csv":
            sheets = {"": pd.read_csv(path, dtype=str, keep_default_na=False)}
        elif path.suffix == ".xlsx":
            sheets = pd.read_excel(path, sheet_name=None, dtype=str, keep_default_na=False)
        else:
            continue
        needles, nulls = set(), {}
        for frame in sheets.values():
            for column in frame.columns:
                cells = frame[column].str.strip()
                needles.update(c for c in cells if len(c) >= 4 and c.lower() not in PLACEHOLDERS)
                nulls[column] = nulls.get(column, 0) + int((cells == "").sum())
        out[path.name] = {"needles": sorted(needles), "nulls": nulls}
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["facts"]:
        json.dump(facts(), sys.stdout)
        sys.exit(0)
    if sys.argv[1:2] != ["check"] or len(sys.argv) < 4:
        sys.exit(__doc__)
    root, failed = Path(sys.argv[2]), False
    for task in sys.argv[3:]:
        problems = check(task, root / task)
        for p in problems:
            print(f"{task}: {p}")
        print(f"{task}: {'ok' if not problems else 'MISMATCH'}")
        failed = failed or bool(problems)
    sys.exit(1 if failed else 0)
