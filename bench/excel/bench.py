#!/usr/bin/env python3
"""Reads every row of the first sheet of an xlsx with one Python library and
prints `<rows> <seconds>` (wall time of open + full iteration).

    bench.py calamine|openpyxl FILE.xlsx
"""

import sys
import time


def with_python_calamine(path):
    from python_calamine import CalamineWorkbook

    start = time.perf_counter()
    book = CalamineWorkbook.from_path(path)
    sheet = book.get_sheet_by_index(0)
    rows = 0
    for _ in sheet.iter_rows():
        rows += 1
    return rows, time.perf_counter() - start


def with_openpyxl(path):
    import openpyxl

    start = time.perf_counter()
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    sheet = book.worksheets[0]
    rows = 0
    for _ in sheet.iter_rows(values_only=True):
        rows += 1
    book.close()
    return rows, time.perf_counter() - start


if __name__ == "__main__":
    which, path = sys.argv[1], sys.argv[2]
    rows, seconds = {"calamine": with_python_calamine, "openpyxl": with_openpyxl}[which](path)
    print(rows, f"{seconds:.3f}")
