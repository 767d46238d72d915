from simdex import _simdex

OPTIONAL = ("base85", "bloom", "btree", "kv")
MISSING = [c for c in OPTIONAL if c not in _simdex.components]

# A component left out of this build (CMake SIMDEX_COMPONENTS) has no tests to run here.
collect_ignore_glob = [f"test_{c}*.py" for c in MISSING]


def pytest_report_header(config):
    if MISSING:
        return f"simdex components not in this build, their tests skipped: {', '.join(MISSING)}"
    return "simdex components: all built"
