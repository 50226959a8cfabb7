"""The README's Python example runs and prints what the README says."""

import re
from pathlib import Path

README = Path(__file__).parent.parent / "README.md"


def test_readme_python_example_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has a Python example"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})
    printed = capsys.readouterr().out.split("\n")
    assert printed[0].startswith("memory 259.16")
    assert printed[1] == "shared"
    assert (tmp_path / "out" / "a100.png").stat().st_size > 10_000
