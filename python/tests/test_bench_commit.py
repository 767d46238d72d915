"""The commit a benchmark JSON names is the one its program was built from, stamped at build time
(not when the build directory was configured), and a program older than its source tree says so."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from simdex import bench

SOURCE = Path(__file__).resolve().parents[2]


def _head() -> str:
    try:
        r = subprocess.run(["git", "-C", str(SOURCE), "rev-parse", "--short=12", "HEAD"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return r.stdout.strip() if r.returncode == 0 else ""


def _environment(tmp_path: Path, **env: str) -> tuple[dict, str]:
    if "primitives" not in bench.available():
        pytest.skip(f"bench_primitives not built in {bench.bench_dir()}")
    run_env = {k: v for k, v in os.environ.items() if k != "SIMDEX_COMMIT"} | env
    r = subprocess.run([str(bench.bench_dir() / "bench_primitives"), "--quick", "--reps", "1", "--no-probe",
                        "--only", "no-such-workload", "--out", str(tmp_path)],
                       capture_output=True, text=True, env=run_env, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / "primitives.json").read_text())["environment"], r.stderr


def test_commit_is_the_source_trees_or_says_it_is_older(tmp_path):
    head = _head()
    if not head:
        pytest.skip("not a git checkout")
    env, stderr = _environment(tmp_path)
    if env["simdex_commit"].removesuffix("+dirty") == head:  # built from HEAD (changed or not)
        assert "source_head" not in env
    else:  # built before the last commit and not rebuilt since: the JSON and stderr say so
        assert env.get("source_head") == head, env
        assert f"built from commit {env['simdex_commit']}" in stderr and head in stderr


def test_simdex_commit_variable_wins(tmp_path):
    env, _ = _environment(tmp_path, SIMDEX_COMMIT="0123456789ab")
    assert env["simdex_commit"] == "0123456789ab"
    assert "source_head" not in env
