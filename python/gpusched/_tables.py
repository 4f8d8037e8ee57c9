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


def columns(text):
    """A CSV text as a dict column -> NumPy array (float for numbers, with NaN for empty
    cells; int64 when every cell is an integer; object for text)."""
    import numpy as np

    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    out = {}
    for i, name in enumerate(header):
        cells = [_value(r[i]) for r in body]
        if all(isinstance(c, int) for c in cells):
            out[name] = np.array(cells, dtype=np.int64)
        elif all(c is None or isinstance(c, (int, float)) for c in cells):
            out[name] = np.array([np.nan if c is None else float(c) for c in cells], dtype=float)
        else:
            out[name] = np.array(["" if c is None else str(c) for c in cells], dtype=object)
    return out
