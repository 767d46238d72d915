"""Files the bloom commands write (add --out/--in-place, lookup -o, build -o) follow simdex._output's
rules: a regular file appears only complete (a failed write leaves an old one as it was and no
temporary file), a symlink's target is replaced and the link kept, a device or FIFO is written in
place and never replaced by a file, errors name the user's path; lookup refuses to overwrite its
own input. build refuses --ndv < 1 as add does, and probe parses every value before answering."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROWS, RG = 2000, 500


def _cli(*args, stdin=None, fsize=None):
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run([sys.executable, "-m", "simdex", "bloom", *map(str, args)], input=stdin,
                          capture_output=True, text=True, timeout=60,
                          preexec_fn=limit if fsize is not None else None)


@pytest.fixture
def plain(tmp_path):
    """A Parquet file without filters (four row groups), in its own directory."""
    d = tmp_path / "in"
    d.mkdir()
    path = d / "a.parquet"
    pq.write_table(pa.table({"id": pa.array(range(ROWS), pa.int64()),
                             "s": pa.array([f"value-{i:06d}" for i in range(ROWS)])}),
                   path, row_group_size=RG)
    return path


def _has_filters(path_or_file) -> bool:
    md = pq.ParquetFile(path_or_file).metadata
    return all((md.row_group(i).column(0).bloom_filter_offset or -1) > 0 for i in range(md.num_row_groups))


def _char_device(tmp_path):
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of our own
    return node


def _leftovers(d) -> list:
    return [n for n in os.listdir(d) if n.endswith(".simdex-tmp") or ".simdex-tmp" in n]


# ---- bloom add ---------------------------------------------------------------------------------

def test_add_out_device_is_written_in_place_not_replaced(plain, tmp_path):
    node = _char_device(tmp_path)
    r = _cli("add", plain, "--column", "id", "--out", node, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.lstat(node).st_mode)  # still the device, not a regular file
    assert _leftovers(tmp_path) == []


def test_add_out_fifo_gets_the_file(plain, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []

    def read_all():
        with open(fifo, "rb") as f:  # closed here, not by the garbage collector (a ResourceWarning)
            got.append(f.read())

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    r = _cli("add", plain, "--column", "id", "--out", fifo, "--no-progress")
    reader.join(10)
    if reader.is_alive():  # the command never opened it: let the reader go
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    regular = tmp_path / "regular.parquet"
    assert _cli("add", plain, "--column", "id", "--out", regular, "--no-progress").returncode == 0
    assert got and got[0] == regular.read_bytes()  # the same file, streamed through the FIFO
    assert _has_filters(pa.BufferReader(got[0]))


def test_add_out_symlink_replaces_its_target_and_keeps_the_link(plain, tmp_path):
    target = tmp_path / "target.parquet"
    target.write_bytes(b"old")
    link = tmp_path / "link.parquet"
    link.symlink_to(target)
    r = _cli("add", plain, "--column", "id", "--out", link, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert os.path.islink(link) and os.readlink(link) == str(target)
    assert _has_filters(target)
    assert not _has_filters(plain)  # the input is untouched


def test_add_in_place_on_a_symlink_updates_its_target(plain, tmp_path):
    link = tmp_path / "link.parquet"
    link.symlink_to(plain)
    r = _cli("add", link, "--column", "id", "--in-place", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert os.path.islink(link) and os.readlink(link) == str(plain)
    assert _has_filters(plain)
    assert _leftovers(tmp_path) == [] and _leftovers(plain.parent) == []


def test_add_out_with_a_trailing_slash_is_a_directory(plain, tmp_path):
    out = tmp_path / "newdir"
    r = _cli("add", plain, "--column", "id", "--out", f"{out}{os.sep}", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert out.is_dir() and _has_filters(out / plain.name)


@pytest.mark.parametrize("in_place", [False, True])
def test_add_failed_write_leaves_the_old_file_and_names_it(plain, tmp_path, in_place):
    out = plain if in_place else tmp_path / "out.parquet"
    if not in_place:
        out.write_bytes(b"the old result")
    before = out.read_bytes()
    where = ("--in-place",) if in_place else ("--out", out)
    r = _cli("add", plain, "--column", "id", *where, "--no-progress", fsize=4096)  # the file is ~30 KB
    assert r.returncode == 1
    assert out.read_bytes() == before
    assert "File too large" in r.stderr and str(out) in r.stderr, r.stderr
    assert "simdex-tmp" not in r.stderr  # the user's name, not the temporary one
    assert _leftovers(tmp_path) == [] and _leftovers(plain.parent) == []


def test_add_error_names_the_output_not_the_temporary_file(plain, tmp_path):
    out = tmp_path / "missing" / "out.parquet"
    r = _cli("add", plain, "--column", "id", "--out", out, "--no-progress")
    assert r.returncode == 1 and "No such file or directory" in r.stderr, r.stderr
    assert f"'{out}'" in r.stderr and "simdex-tmp" not in r.stderr, r.stderr


def test_add_refuses_a_directory_where_the_file_would_go(plain, tmp_path):
    out = tmp_path / "o"
    (out / plain.name).mkdir(parents=True)
    r = _cli("add", plain, "--column", "id", "--out", out, "--no-progress")
    assert r.returncode == 1 and "Is a directory" in r.stderr and str(out / plain.name) in r.stderr, r.stderr
    assert (out / plain.name).is_dir() and os.listdir(out / plain.name) == [] and _leftovers(out) == []


# ---- bloom lookup -o ---------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["same", "symlink", "hardlink", "directory"])
def test_lookup_refuses_to_write_its_input(plain, tmp_path, how):
    before = plain.read_bytes()
    source = plain.parent if how == "directory" else plain
    out = plain
    if how == "symlink":
        out = tmp_path / "rows.parquet"
        out.symlink_to(plain)
    elif how == "hardlink":
        out = tmp_path / "rows.parquet"
        os.link(plain, out)
    r = _cli("lookup", source, "--column", "id", "--value", "1", "-o", out, "--no-progress")
    assert r.returncode == 1 and "input file is output file" in r.stderr, r.stderr
    assert plain.read_bytes() == before and pq.read_metadata(plain).num_rows == ROWS


@pytest.mark.parametrize("name", ["rows.csv", "rows.parquet"])
def test_lookup_failed_write_leaves_the_old_output(plain, tmp_path, name):
    values = tmp_path / "values.txt"
    values.write_text("".join(f"{i}\n" for i in range(ROWS)))
    out = tmp_path / name
    pq.write_table(pa.table({"old": [1, 2, 3]}), out) if name.endswith(".parquet") else out.write_text("old\n1\n")
    before = out.read_bytes()
    # Every row (~60 KB as CSV, ~40 KB as Parquet) against a 16 KB limit.
    r = _cli("lookup", plain, "--column", "id", "--values-file", values, "-o", out, "--no-progress",
             fsize=16384)
    assert r.returncode == 1
    assert out.read_bytes() == before  # neither truncated nor deleted
    assert "File too large" in r.stderr and str(out) in r.stderr and "simdex-tmp" not in r.stderr, r.stderr
    assert _leftovers(tmp_path) == []
    r = _cli("lookup", plain, "--column", "id", "--values-file", values, "-o", out, "--no-progress")
    assert r.returncode == 0, r.stderr
    if name.endswith(".parquet"):
        assert pq.read_table(out).num_rows == ROWS
    else:
        assert out.read_text().count("\n") == ROWS + 1


def test_lookup_output_to_a_device_is_written_in_place(plain, tmp_path):
    node = _char_device(tmp_path)
    r = _cli("lookup", plain, "--column", "id", "--value", "7", "-o", node, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.lstat(node).st_mode) and _leftovers(tmp_path) == []


# ---- bloom build / probe -----------------------------------------------------------------------

def test_build_failed_write_leaves_the_old_filter(tmp_path):
    out = tmp_path / "ids.bloom"
    assert _cli("build", "--type", "INT64", "--bytes", "1024", "-o", out, stdin="1\n2\n").returncode == 0
    before = out.read_bytes()
    r = _cli("build", "--type", "INT64", "--bytes", "65536", "-o", out, stdin="3\n4\n", fsize=8192)
    assert r.returncode == 1
    assert out.read_bytes() == before and _leftovers(tmp_path) == []
    assert "File too large" in r.stderr and str(out) in r.stderr and "simdex-tmp" not in r.stderr, r.stderr


def test_build_to_a_device_is_written_in_place(tmp_path):
    node = _char_device(tmp_path)
    r = _cli("build", "--type", "INT64", "-o", node, stdin="1\n2\n")
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.lstat(node).st_mode)


@pytest.mark.parametrize("ndv", ["0", "-3"])
def test_build_and_add_refuse_ndv_below_1(plain, tmp_path, ndv):
    out = tmp_path / "ids.bloom"
    r = _cli("build", "--type", "INT64", "--ndv", ndv, "-o", out, stdin="1\n2\n")
    assert r.returncode == 2 and f"ndv must be at least 1, got {ndv}" in r.stderr, r.stderr
    assert not out.exists()
    r = _cli("add", plain, "--column", "id", "--ndv", ndv, "--out", tmp_path / "o.parquet", "--no-progress")
    assert r.returncode == 2 and f"ndv must be at least 1, got {ndv}" in r.stderr, r.stderr
    assert not (tmp_path / "o.parquet").exists()


def test_probe_checks_every_value_before_answering(tmp_path):
    out = tmp_path / "ids.bloom"
    assert _cli("build", "--type", "INT64", "--bytes", "4096", "-o", out, stdin="1\n2\n").returncode == 0
    r = _cli("probe", out, "1", "2", "x")
    assert r.returncode == 1 and "'x'" in r.stderr, r.stderr
    assert r.stdout == ""  # no answers for the values before the bad one
    r = _cli("probe", out, "1", "3")
    assert r.returncode == 0 and r.stdout.splitlines() == ["1\tmaybe", "3\tabsent"]


def test_build_to_stdout_and_its_usage_errors(tmp_path):
    """`build -o -` wrote a file named "-"; it now writes the filter to stdout (the summary to
    stderr). A bad --bytes or --fpp is a usage error (exit 2) before any input is read."""
    r = subprocess.run([sys.executable, "-m", "simdex", "bloom", "build", "--type", "INT64", "-o", "-"],
                       input=b"1\n2\n3\n", capture_output=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 0 and not (tmp_path / "-").exists(), r.stderr
    assert b"wrote stdout" in r.stderr
    (tmp_path / "f.bloom").write_bytes(r.stdout)
    p = _cli("probe", tmp_path / "f.bloom", "2", "999999")
    assert p.returncode == 0 and p.stdout.split("\n")[0].endswith("maybe"), p.stderr
    for opt in (["--bytes", "48"], ["--bytes", str(1 << 28)], ["--fpp", "1.5"], ["--fpp", "0"]):
        r = _cli("build", "--type", "INT64", *opt, "-o", tmp_path / "g.bloom", stdin="1\n")
        assert r.returncode == 2 and "Traceback" not in r.stderr and opt[0] in r.stderr, (opt, r.stderr)
        assert not (tmp_path / "g.bloom").exists()


def test_lookup_csv_by_any_case_of_the_extension(plain, tmp_path):
    """`lookup -o rows.CSV` wrote Parquet: only a lower-case .csv chose CSV."""
    out = tmp_path / "rows.CSV"
    r = _cli("lookup", plain, "--column", "id", "--value", "7", "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_text().splitlines()[0].replace('"', "").startswith("id")


@pytest.mark.skipif(not hasattr(pa, "uuid"), reason="pyarrow without the UUID extension type")
def test_lookup_csv_writes_uuid_columns_as_text(tmp_path):
    """pyarrow's CSV writer takes no extension types, so a lookup of a file with a UUID column
    failed whole with --format csv or -o x.csv ("Unsupported Type"); UUIDs are now written as
    their canonical text (audit of 2026-11-28)."""
    import uuid

    path = tmp_path / "u.parquet"
    ids = [uuid.UUID(int=i * 7919).bytes for i in range(20)]
    pq.write_table(pa.table({"id": pa.array(ids, pa.uuid()), "x": list(range(20))}), path)
    want = f'"id","x"\n"{uuid.UUID(int=3 * 7919)}",3\n'
    r = _cli("lookup", path, "--column", "x", "--value", "3", "--format", "csv")
    assert r.returncode == 0 and r.stdout == want, r.stderr
    out = tmp_path / "rows.csv"
    r = _cli("lookup", path, "--column", "x", "--value", "3", "-o", out)
    assert r.returncode == 0 and out.read_text() == want, r.stderr
