"""CPython's own base64 tests of the Base85 and Ascii85 functions, run against simdex.base85.

simdex.base85's b85encode / b85decode / a85encode / a85decode (and z85encode / z85decode where
the running CPython has them) are drop-ins for base64's, so they must pass the tests CPython
ships for those functions: Lib/test/test_base64.py of the running interpreter (Debian installs
it with libpython3.X-testsuite, which scripts/setup.sh asks for; pyenv and python.org builds
include it). cpython_base64.py gives the suite's module a copy of base64 whose Base85 functions
are simdex's; every test method whose source calls one of them becomes one case here.

Without that file the module is skipped, except under scripts/test.sh, which sets
SIMDEX_REQUIRE_CPYTHON_TESTS=1 so that a missing suite fails instead of passing unseen.
"""

from __future__ import annotations

import base64
import os

import cpython_base64 as cb
import pytest

from simdex import base85

REQUIRED = os.environ.get("SIMDEX_REQUIRE_CPYTHON_TESTS") == "1"
SUITE, PROBLEM = cb.load()
CASES = cb.cases(SUITE) if SUITE is not None else []


@pytest.fixture
def simdex_base64(monkeypatch):
    """The suite's module sees a copy of base64 whose Base85 functions are simdex's."""
    proxy = cb.with_simdex(base85)
    monkeypatch.setattr(SUITE, "base64", proxy)
    return proxy


def test_the_suite_is_here():
    if SUITE is None:
        if REQUIRED:
            pytest.fail(PROBLEM)
        pytest.skip(PROBLEM)
    names = {name for _, name in CASES}
    # The functions simdex replaces are exercised: a suite that no longer calls them (renamed
    # tests, a moved module) must not pass here by running nothing.
    assert {"test_b85encode", "test_b85decode", "test_a85encode", "test_a85decode"} <= names, names


@pytest.mark.parametrize("cls,name", [pytest.param(c, n, id=f"{c.__name__}.{n}") for c, n in CASES]
                         or [pytest.param(None, None, marks=pytest.mark.skip(reason=PROBLEM or ""))])
def test_cpython(cls, name, simdex_base64):
    problems = cb.run(cls, name)
    assert not problems, problems


@pytest.mark.skipif(SUITE is None, reason=PROBLEM or "")
def test_the_copy_is_what_the_suite_calls(simdex_base64):
    """The cases above would prove nothing if the suite's module still held the real base64."""
    assert SUITE.base64 is simdex_base64
    assert SUITE.base64.b85encode is base85.b85encode
    assert base64.b85encode is not base85.b85encode
