"""Writers leave a whole file or none: temp files are removed whatever fails."""

import os

import pytest

from cuzk.atomic_file import atomic_write, write_together


def test_a_failing_writer_leaves_the_target_untouched_and_no_temp_file(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as f:
            f.write(b"new, half")
            raise RuntimeError("disk full")
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["out.bin"]


def test_a_directory_target_is_refused_before_writing(tmp_path):
    with pytest.raises(IsADirectoryError):
        with atomic_write(tmp_path) as f:
            f.write(b"x")
    assert os.listdir(tmp_path) == []


def test_write_together_replaces_all_or_restores_all(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"a-old")
    write_together({a: b"a1", b: b"b1"})
    assert (a.read_bytes(), b.read_bytes()) == (b"a1", b"b1")
    real = os.replace
    calls = []

    def flaky(src, dst):  # the new content's rename onto the second file fails (once)
        if str(dst) == str(b) and ".b." in str(src) and not calls:
            calls.append(dst)
            raise OSError("no space")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(OSError, match="no space"):
        write_together({a: b"a2", b: b"b2"})
    monkeypatch.undo()
    assert (a.read_bytes(), b.read_bytes()) == (b"a1", b"b1")
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


def test_permissions_follow_the_umask_or_the_request(tmp_path):
    with atomic_write(tmp_path / "x") as f:
        f.write(b"1")
    with atomic_write(tmp_path / "y", perms=0o640) as f:
        f.write(b"1")
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "x").stat().st_mode & 0o777 == 0o666 & ~umask
    assert (tmp_path / "y").stat().st_mode & 0o777 == 0o640


def test_write_together_refuses_two_paths_of_one_file(tmp_path):
    from cuzk.errors import InputError

    (tmp_path / "sub").mkdir()
    os.symlink(tmp_path / "sub", tmp_path / "link")
    a = tmp_path / "sub" / "a.json"
    # the second write replaced the first: one file left, holding the second's bytes
    for other in (a, tmp_path / "sub" / "." / "a.json", tmp_path / "link" / "a.json"):
        with pytest.raises(InputError, match="each output needs its own file"):
            write_together({a: b"proof", str(other): b"public"})
        assert os.listdir(tmp_path / "sub") == []
