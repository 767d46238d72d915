"""simdex.kv as a new user meets it: paths, argument conventions, help texts (audit of 2026-11-28)."""

import inspect
import os
import subprocess
import sys

import pytest

import simdex.kv as kv


def test_open_takes_bytes_and_path_like_paths(tmp_path, monkeypatch):
    """str(path) turned b"data.kv" into a file named "b'data.kv'" in the working directory."""
    monkeypatch.chdir(tmp_path)
    db = kv.open(b"rel.kv")
    with db.write() as tx:
        tx[b"k"] = b"v"
    assert db.path == "rel.kv"
    db.close()
    assert sorted(os.listdir(tmp_path)) == ["rel.kv"]
    db = kv.open(os.fsencode(str(tmp_path / "rel.kv")), read_only=True)
    assert db.read()[b"k"] == b"v"
    db.close()
    db = kv.open(tmp_path / "rel.kv", read_only=True)  # os.PathLike
    assert db.read()[b"k"] == b"v"
    db.close()


def test_count_takes_none_as_items_does():
    db = kv.open()
    with db.write() as tx:
        for k in (b"", b"a", b"b", b"c"):
            tx[k] = b"v"
    with db.read() as s:
        assert s.count(None, b"c") == len(list(s.items(None, b"c"))) == 3
        assert s.count(None) == s.count() == len(s) == 4


def test_dunder_methods_are_documented():
    """help(simdex.kv) listed view[key], del tx[key] (KeyError) and the rest with no text."""
    for cls in (kv.Snapshot, kv.Transaction):
        for name in ("__getitem__", "__contains__", "__len__", "__iter__", "__setitem__", "__delitem__"):
            assert inspect.getdoc(getattr(cls, name)), f"{cls.__name__}.{name} has no docstring"


def test_cli_subcommand_help_says_what_it_does():
    """`simdex kv stat --help` and `check --help` printed only their usage lines."""
    for cmd, says in (("stat", "bytes per key"), ("check", "Exit 0")):
        r = subprocess.run([sys.executable, "-m", "simdex", "kv", cmd, "--help"], capture_output=True, text=True)
        assert r.returncode == 0 and says in r.stdout and "the database file" in r.stdout, r.stdout


def test_abort_after_commit_or_abort_does_nothing():
    """abort() on an ended transaction raised invalid_argument, which broke the py-lmdb idiom
    of committing in the try block and aborting in finally."""
    db = kv.open()
    tx = db.write()
    try:
        tx[b"k"] = b"v"
        tx.commit()
    finally:
        tx.abort()
    assert db.read()[b"k"] == b"v"
    tx = db.write()
    tx[b"k2"] = b"v"
    tx.abort()
    tx.abort()
    assert b"k2" not in db.read()
    with pytest.raises(kv.KvError) as e:  # committing an ended transaction still raises
        tx.commit()
    assert e.value.kind == "invalid_argument"
