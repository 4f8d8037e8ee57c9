# SPDX-License-Identifier: Apache-2.0
"""CSV text (as gpusched-replay writes it) to Python values and NumPy columns."""
import csv
import io


def _value(text):
    """A CSV cell as the CLI wrote it: int, float, None (empty) or str."""
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def summary_row(text):
    """The one data row of a summary.csv text as an ordered dict column -> value."""
    rows = list(csv.reader(io.StringIO(text)))
    header, values = rows[0], rows[1]
    return {k: _value(v) for k, v in zip(header, values)}


_pure_python = False  # tests set it to compare the C++ parser with this one


def columns(text):
    """A CSV text as a dict column -> NumPy array: int64 when every cell is an integer, float
    when every cell is a number or empty (NaN), else object (text). Vectorised per column (a
    7,423-job table in tens of milliseconds)."""
    import numpy as np

    if '"' not in text and not _pure_python:
        from ._gpusched import _csv_columns  # the same columns, parsed in C++ (about 10x faster)

        return _csv_columns(text)
    if '"' in text:  # quoted cells: the csv module (the library's writers do not quote)
        rows = list(csv.reader(io.StringIO(text)))
    else:
        rows = [line.split(",") for line in text.splitlines()]
    header, body = rows[0], rows[1:]
    cols = list(zip(*body)) if body else [()] * len(header)
    out = {}
    for name, col in zip(header, cols):
        cells = np.array(col, dtype=str)
        try:
            out[name] = cells.astype(np.int64)
            continue
        except (ValueError, OverflowError):  # past int64: a float column
            pass
        try:
            out[name] = np.where(cells == "", "nan", cells).astype(float)
            continue
        except ValueError:
            pass
        out[name] = cells.astype(object)
    return out
