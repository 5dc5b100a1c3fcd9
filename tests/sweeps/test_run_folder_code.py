"""A notebook's results folder is keyed by the code as well as the parameters: rows are reused
only under the same code, and a folder of older code may hold a CSV whose columns the sweep no
longer has (a column added: the sweep refuses the file, and the docs build stopped on it)."""

from __future__ import annotations

from lpsched.sweeps import engine


def test_a_results_folder_is_keyed_by_the_code_too(tmp_path, monkeypatch):
    first = engine.run_folder("nb", {"a": 1}, root=tmp_path)
    assert engine.run_folder("nb", {"a": 1}, root=tmp_path) == first  # a rerun resumes
    monkeypatch.setattr(engine, "provenance", lambda params: {"commit": "other code"})
    other = engine.run_folder("nb", {"a": 1}, root=tmp_path)
    assert other != first and other.name.startswith("nb-")
    assert (other / "params.json").read_text() == '{\n "a": 1\n}\n'
