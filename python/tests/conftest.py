import subprocess
import sys

import pytest

from simdex import components

# A component left out of this build (CMake SIMDEX_ONLY_COMPONENTS) has no tests to run here:
# python/tests/test_<component>*.py belong to it.
MISSING = [c for c in components.ALL if c not in components.BUILT]
collect_ignore_glob = [f"test_{c}*.py" for c in MISSING]


def pytest_report_header(config):
    if MISSING:
        return f"simdex components not in this build, their tests skipped: {', '.join(MISSING)}"
    return "simdex components: all built"


@pytest.fixture(scope="session")
def bench_run(tmp_path_factory):
    """``bench_run(component, *args)``: runs ``simdex *args --out DIR`` in a fresh DIR and returns
    DIR; skips where this installation has no bench_<component>."""
    from simdex import bench

    def run(component: str, *args: str):
        if component not in bench.available():
            pytest.skip(f"bench_{component} not built in {bench.bench_dir()}")
        out = tmp_path_factory.mktemp(component)
        r = subprocess.run([sys.executable, "-m", "simdex", *args, "--out", str(out)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return out

    return run
