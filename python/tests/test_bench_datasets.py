"""The dataset benchmark on a tiny shape: both key types run one after the other, files without
filters are kept only for the add-filters repetitions, and larger runs leave no data behind."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("duckdb")

from simdex.benchmarks import datasets  # noqa: E402


@pytest.mark.parametrize("keep", ["1", "0"])
def test_tiny_run_phases_and_disk(tmp_path, monkeypatch, keep):
    monkeypatch.setenv("SIMDEX_DATASETS_SHAPE", "10,16,1000")
    monkeypatch.setenv("SIMDEX_DATASETS_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SIMDEX_DATASETS_KEEP", keep)
    monkeypatch.setattr(datasets, "_dask", lambda *a, **k: None)  # LocalClusters: tested elsewhere
    # (10 x 16 row groups: enough rows drawn for the 10,000-key lookups)
    doc = json.loads(datasets.run_standalone(tmp_path / "out", "quick", reps=2, log=lambda m: None).read_text())
    assert [p["key_type"] for p in doc["phases"]] == ["int64", "string"]
    assert doc["data_identical_after_add"] and doc["add_filters_data_identical"]
    assert 0 < doc["disk_peak_bytes"] <= max(p["disk_bytes"] for p in doc["phases"])
    kinds = {(r["workload"], r["params"].get("key_type")) for r in doc["results"]}
    assert kinds == {("lookup", "int64"), ("lookup", "string"), ("add_filters", "int64"), ("add_filters", "string")}
    rows = datasets.bar_rows(doc)
    for rewrite in ("pyarrow rewrite", "pyarrow rewrite + fsync"):  # both peers, in the bar table
        assert any(r[0] == f"add filters (string column, synced) vs {rewrite}" for r in rows)
    for key_type in ("int64", "string"):
        kt = tmp_path / "data" / key_type
        if keep == "1":
            assert len(list((kt / "filtered").iterdir())) == 10
            assert len(list((kt / "plain").iterdir())) == datasets._plain_kept(2)
        else:
            assert not kt.exists()


def test_phase_subset_runs_only_what_it_names(tmp_path, monkeypatch):
    """SIMDEX_DATASETS_PHASES=dask (a scaling run on a lent machine): the int64 dataset alone, no
    lookups or add-filters timings, and the worker counts asked for reach the Dask phase."""
    monkeypatch.setenv("SIMDEX_DATASETS_SHAPE", "3,2,500")
    monkeypatch.setenv("SIMDEX_DATASETS_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SIMDEX_DATASETS_PHASES", "dask_add")
    monkeypatch.setenv("SIMDEX_DATASETS_DASK_WORKERS", "4,1,2")
    seen = []
    monkeypatch.setattr(datasets, "_dask", lambda doc, root, files, reps, rng, log, phases: seen.append((len(files), datasets._dask_workers(), phases)))
    doc = json.loads(datasets.run_standalone(tmp_path / "out", "quick", reps=1, log=lambda m: None).read_text())
    assert [p["key_type"] for p in doc["phases"]] == ["int64"]
    assert doc["results"] == [] and "add_filters_data_identical" not in doc
    assert seen == [(3, (1, 2, 4), ("dask_add",))] and doc["params"]["dask_workers"] == [1, 2, 4]
    assert not any(r[0].startswith("data pages") for r in datasets.bar_rows(doc))


def test_dask_names_both_dask_phases(monkeypatch):
    monkeypatch.setenv("SIMDEX_DATASETS_PHASES", "dask,lookups")
    assert datasets._phases() == ("lookups", "dask_add", "dask_lookup")


@pytest.mark.parametrize("var,value", [("SIMDEX_DATASETS_PHASES", "dask,typo"), ("SIMDEX_DATASETS_PHASES", ","),
                                       ("SIMDEX_DATASETS_DASK_WORKERS", "2,4"), ("SIMDEX_DATASETS_DASK_WORKERS", "1,x")])
def test_bad_phase_or_worker_lists_are_refused(monkeypatch, var, value):
    monkeypatch.setenv(var, value)
    with pytest.raises(ValueError, match=var):
        datasets._phases() if var.endswith("PHASES") else datasets._dask_workers()


def test_dask_rows_for_every_worker_count():
    def res(n, s):
        return {"workload": "dask_add_filters", "contender": datasets._workers_name(n), "params": {}, "median": s}

    doc = {"params": {"dask_workers": [1, 2, 8]}, "results": [res(1, 8.0), res(2, 4.4), res(8, 1.25)],
           "dask_load": {"loadavg_1m_start": 1, "loadavg_1m_end": 2, "busy_share": 0.5, "cpus": 16}}
    rows = {r[0]: r for r in datasets.bar_rows(doc)}
    assert rows["Dask 2 workers vs 1, adding filters"][1].startswith("1.82x") and rows["Dask 2 workers vs 1, adding filters"][3] == "yes"
    assert rows["Dask 8 workers vs 1, adding filters"][1].startswith("6.40x") and rows["Dask 8 workers vs 1, adding filters"][3] == "-"


@pytest.mark.parametrize("shape,phases,match", [("20,7,1000", "", "157 row groups"), ("20,7,1000", "dask_lookup", "157 row groups"),
                                                ("200,1,32", "dask_add", "64 rows per row group")])
def test_shape_too_small_is_refused_before_any_file(tmp_path, monkeypatch, shape, phases, match):
    monkeypatch.setenv("SIMDEX_DATASETS_SHAPE", shape)
    monkeypatch.setenv("SIMDEX_DATASETS_DIR", str(tmp_path / "data"))
    if phases:
        monkeypatch.setenv("SIMDEX_DATASETS_PHASES", phases)
    with pytest.raises(ValueError, match=match):
        datasets.run_standalone(tmp_path / "out", "quick", reps=1, log=lambda m: None)
    assert not list((tmp_path / "data").glob("*/*/*.parquet"))
