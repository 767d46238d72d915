from simdex import components

# A component left out of this build (CMake SIMDEX_ONLY_COMPONENTS) has no tests to run here:
# python/tests/test_<component>*.py belong to it.
MISSING = [c for c in components.ALL if c not in components.BUILT]
collect_ignore_glob = [f"test_{c}*.py" for c in MISSING]


def pytest_report_header(config):
    if MISSING:
        return f"simdex components not in this build, their tests skipped: {', '.join(MISSING)}"
    return "simdex components: all built"
