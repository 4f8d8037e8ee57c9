# SPDX-License-Identifier: Apache-2.0
"""gpusched.replay against the gpusched-replay command: the same summary.csv row, the same
per-job, per-sample and per-tenant tables; Python policies as one slot of a composition."""
import csv
import os
import subprocess

import numpy as np
import pytest

import gpusched as gs
from gpusched import _tables


@pytest.fixture
def trace(data_dir):
    return "tiresias:" + os.path.join(data_dir, "trace", "tiresias_60_job.csv")


COMPARE = {"fifo": "ordering=fifo", "prio": "ordering=priority,preemption=none",
           "drf-easy": "ordering=drf,admission=gang-easy,preemption=checkpoint-aware"}


def run_cli(tmp_path, trace, cluster, compare, *extra):
    spec = ";".join(f"{label}:{c}" for label, c in compare.items())
    subprocess.run([os.environ["GPUSCHED_REPLAY_CLI"], "--trace", trace, "--cluster", cluster,
                    "--compare", spec, "--out", str(tmp_path), "--quiet", *extra], check=True)
    with open(tmp_path / "summary.csv") as f:
        rows = list(csv.reader(f))
    return {r[0]: {k: _tables._value(v) for k, v in zip(rows[0], r)} for r in rows[1:]}


def test_every_summary_column_equals_the_cli(tmp_path, trace):
    cli = run_cli(tmp_path, trace, "4x4:V100-SXM2-32GB", COMPARE, "--seed", "3")
    py = gs.replay(trace=trace, cluster="4x4:V100-SXM2-32GB", compare=COMPARE, seed=3)
    assert list(py) == list(COMPARE)
    for label in COMPARE:
        assert list(py[label]["summary"]) == list(cli[label]), label  # same columns, same order
        assert py[label]["summary"] == cli[label], label  # same values
        assert py[label]["summary"]["finished"] == 60
        with open(tmp_path / label / "jobs.csv") as f:
            jobs = _tables.columns(f.read())
        for column, values in jobs.items():
            got = py[label]["jobs"][column]
            if values.dtype == object:
                assert list(got) == list(values), column
            else:
                np.testing.assert_array_equal(got, values, err_msg=column)
        with open(tmp_path / label / "samples.csv") as f:
            samples = _tables.columns(f.read())
        assert set(samples) == set(py[label]["samples"])
        np.testing.assert_array_equal(py[label]["samples"]["allocated_gpus"],
                                      samples["allocated_gpus"])
        with open(tmp_path / label / "tenants.csv") as f:
            assert list(_tables.columns(f.read())) == list(py[label]["tenants"])


def test_the_tables_are_numpy_columns(trace):
    run = gs.replay(trace=trace, cluster="4x4", compare={"fifo": "ordering=fifo"})["fifo"]
    jobs = run["jobs"]
    assert jobs["job"].dtype == np.int64 and len(jobs["job"]) == 60
    assert jobs["jct_s"].dtype == float and np.all(jobs["jct_s"] > 0)
    assert set(jobs["outcome"]) == {"finished"}
    assert run["events"] == run["summary"]["events"]


def same_columns(a, b):
    assert list(a) == list(b)
    for name in a:
        assert a[name].dtype == b[name].dtype, name
        if a[name].dtype == object:
            assert list(a[name]) == list(b[name]), name
        else:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def pure_python_columns(text, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(_tables, "_pure_python", True)
        return _tables.columns(text)


def test_the_cxx_table_parser_gives_the_pure_python_columns(tmp_path, trace, monkeypatch):
    text = ("i,f,e,t,big,neg\n"
            "1,0.5,,a,9223372036854775807,-3\n"
            "-2,1e+06,2.25,b c,9223372036854775808,-0\n"
            "3,7,nan,4,1,inf\n")
    fast = _tables.columns(text)
    assert fast["i"].dtype == np.int64 and fast["f"].dtype == float
    assert np.isnan(fast["e"][0]) and fast["t"].dtype == object
    assert fast["big"].dtype == float  # past int64: a float column, as NumPy does
    same_columns(fast, pure_python_columns(text, monkeypatch))
    same_columns(_tables.columns("a,b\n"), pure_python_columns("a,b\n", monkeypatch))
    run_cli(tmp_path, trace, "4x4", COMPARE)
    for label in COMPARE:
        for table in ("jobs", "samples", "tenants"):
            with open(tmp_path / label / f"{table}.csv") as f:
                text = f.read()
            same_columns(_tables.columns(text), pure_python_columns(text, monkeypatch))
    with pytest.raises(gs.InvalidValueError, match="row 1"):
        _tables.columns("a,b\n1,2,3\n")


def test_options_are_the_commands(trace):
    out = gs.replay(trace=trace, cluster="4x4", arrival_scale=100,
                    compare={"f": {"ordering": "fifo", "preemption": "none"}}, tables=False)
    assert out["f"]["summary"]["makespan_s"] == 178022  # as replay.arrival_scale_stretches_arrivals
    assert "jobs" not in out["f"]
    with pytest.raises(gs.InvalidValueError, match="arrival-scale: '0' is not above 0"):
        gs.replay(trace=trace, arrival_scale=0)
    with pytest.raises(gs.InvalidValueError, match="unknown option --bogus"):
        gs.replay(trace=trace, bogus=1)
    with pytest.raises(gs.InvalidValueError, match="unknown_name.*no-such"):
        gs.replay(trace=trace, compare={"x": "ordering=no-such"})
    with pytest.raises(gs.ParseError, match="philly_bad_line.csv:4"):
        gs.replay(trace="philly:" + os.path.join(os.environ["GPUSCHED_TEST_DATA_DIR"], "trace",
                                                 "philly_bad_line.csv"))


def test_the_communication_model_is_switched_on_by_keyword(tmp_path):
    # One 8-GPU job on two 4-GPU nodes: its ring crosses the 12.5 GB/s NICs, so with
    # 100 ms of computation and 1000 MB of gradients per iteration it runs at
    # (100 + 70) / (100 + 140) of its trace speed (tests/outputs/replay-comm.sh).
    t = tmp_path / "t.csv"
    t.write_text("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                 "0,8,0,1,x,1000,1\n")
    c = {"c": "preemption=none,placement=first-fit"}
    off = gs.replay(trace="tiresias:" + str(t), cluster="3x4", compare=c)
    on = gs.replay(trace="tiresias:" + str(t), cluster="3x4", compare=c, comm=True,
                   comm_profile="100:1000")
    assert off["c"]["jobs"]["jct_s"][0] == pytest.approx(1000.0)
    assert on["c"]["jobs"]["jct_s"][0] == pytest.approx(1000 * 240 / 170, abs=0.01)
    with pytest.raises(gs.InvalidValueError, match="nic-gbps: '0' is not a bandwidth above 0"):
        gs.replay(trace="tiresias:" + str(t), cluster="3x4", comm=True, nic_gbps=0)


def test_a_python_policy_is_one_slot_of_a_composition(trace):
    calls = {"n": 0}

    def fifo_in_python(ctx, pending):
        calls["n"] += 1
        return sorted(pending, key=lambda j: (j.submit_s, j.id))

    out = gs.replay(trace=trace, cluster="4x4",
                    compare={"cpp": "ordering=fifo,preemption=none",
                             "py": {"ordering": fifo_in_python, "preemption": "none"}})
    assert calls["n"] > 0
    # the same order as the library's FIFO: the same figures
    assert out["py"]["summary"] == {**out["cpp"]["summary"], "label": "py"}


def test_a_python_policy_error_in_a_replay_is_raised(trace):
    def broken(ctx, pending):
        raise ArithmeticError("boom")

    with pytest.raises(gs.PolicyError, match="ordering policy .*broken.*boom") as e:
        gs.replay(trace=trace, cluster="4x4", compare={"b": {"ordering": broken}})
    assert isinstance(e.value.__cause__, ArithmeticError)
