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
