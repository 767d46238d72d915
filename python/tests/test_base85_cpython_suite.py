"""CPython's own base64 tests of the Base85 and Ascii85 functions, run against simdex.base85.

simdex.base85's b85encode / b85decode / a85encode / a85decode (and z85encode / z85decode where
the running CPython has them) are drop-ins for base64's, so they must pass the tests CPython
ships for those functions: Lib/test/test_base64.py of the running interpreter (Debian installs
it with libpython3.X-testsuite, which scripts/setup.sh asks for; pyenv and python.org builds
include it). The module is loaded as it is and given, in place of ``base64``, a copy of the
real module whose Base85 functions are simdex's; the real module is not touched. Every test
method whose source calls one of those functions becomes one case here.

Without that file the module is skipped, except under scripts/test.sh, which sets
SIMDEX_REQUIRE_CPYTHON_TESTS=1 so that a missing suite fails instead of passing unseen.
"""

from __future__ import annotations

import base64
import importlib
import inspect
import os
import re
import types
import unittest

import pytest

from simdex import base85

REQUIRED = os.environ.get("SIMDEX_REQUIRE_CPYTHON_TESTS") == "1"
REPLACED = [n for n in ("b85encode", "b85decode", "a85encode", "a85decode", "z85encode", "z85decode") if hasattr(base64, n)]
_CALLS = re.compile(r"\bbase64\.(" + "|".join(REPLACED) + r")\b")


def _load():
    try:
        return importlib.import_module("test.test_base64"), None
    except ImportError as e:  # no test package in this interpreter
        return None, f"CPython's test.test_base64 is not installed ({e}); on Debian 12: apt-get install libpython3.11-testsuite"


SUITE, PROBLEM = _load()


def _cases():
    if SUITE is None:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=PROBLEM))]
    out = []
    for cls in vars(SUITE).values():
        if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
            continue
        for name, fn in sorted(vars(cls).items()):
            if name.startswith("test") and callable(fn) and _CALLS.search(inspect.getsource(fn)):
                out.append(pytest.param(cls, name, id=f"{cls.__name__}.{name}"))
    return out


@pytest.fixture
def simdex_base64(monkeypatch):
    """The suite's module sees a copy of base64 whose Base85 functions are simdex's."""
    proxy = types.ModuleType("base64")
    proxy.__dict__.update(vars(base64))
    for name in REPLACED:
        setattr(proxy, name, getattr(base85, name))
    monkeypatch.setattr(SUITE, "base64", proxy)
    return proxy


def test_the_suite_is_here():
    if SUITE is None:
        if REQUIRED:
            pytest.fail(PROBLEM)
        pytest.skip(PROBLEM)
    names = {p.values[1] for p in _cases()}
    # The functions simdex replaces are exercised: a suite that no longer calls them (renamed
    # tests, a moved module) must not pass here by running nothing.
    assert {"test_b85encode", "test_b85decode", "test_a85encode", "test_a85decode"} <= names, names


@pytest.mark.parametrize("cls,name", _cases())
def test_cpython(cls, name, simdex_base64):
    case = cls(name)
    result = unittest.TestResult()
    case.run(result)
    problems = result.failures + result.errors
    assert not problems, "\n".join(text for _, text in problems)
    assert not result.skipped, result.skipped


@pytest.mark.skipif(SUITE is None, reason=PROBLEM or "")
def test_the_copy_is_what_the_suite_calls(simdex_base64):
    """The cases above would prove nothing if the suite's module still held the real base64."""
    assert SUITE.base64 is simdex_base64
    assert SUITE.base64.b85encode is base85.b85encode
    assert base64.b85encode is not base85.b85encode
