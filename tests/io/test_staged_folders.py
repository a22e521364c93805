"""A folder written whole or not at all (evalkit.io.writing.folders), and `evalkit train --out` written so."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from evalkit.core.errors import UsageError
from evalkit.io.writing.folders import check_folder, staged_folder
from evalkit.io.writing.temporaries import clean_stale_temporaries
from support.helpers import run_cli


def _names(folder) -> list[str]:
    return sorted(os.listdir(folder))


def test_the_folder_appears_whole(tmp_path):
    target = tmp_path / "model"
    with staged_folder(target) as staging:
        (staging / "weights.bin").write_bytes(b"w")
        assert not target.exists() and staging.parent == tmp_path and staging.name.startswith(".model.evalkit-")
    assert _names(target) == ["weights.bin"] and _names(tmp_path) == ["model"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o777 & ~_umask())  # the mode of a folder made with mkdir


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_an_error_leaves_the_target_as_it_was(tmp_path):
    target = tmp_path / "model"
    target.mkdir()
    (target / "old.bin").write_bytes(b"old")
    with pytest.raises(RuntimeError), staged_folder(target, force=True) as staging:
        (staging / "new.bin").write_bytes(b"new")
        raise RuntimeError("training failed")
    assert _names(target) == ["old.bin"] and _names(tmp_path) == ["model"]


def test_a_replaced_folder_is_gone_only_after_the_new_one_is_in_place(tmp_path):
    target = tmp_path / "model"
    target.mkdir()
    (target / "old.bin").write_bytes(b"old")
    with pytest.raises(UsageError, match="exists and is not empty; pass --force"):
        check_folder(target)
    with staged_folder(target, force=True) as staging:
        (staging / "new.bin").write_bytes(b"new")
    assert _names(target) == ["new.bin"] and _names(tmp_path) == ["model"]


def test_a_folder_holding_an_input_is_refused_even_with_force(tmp_path):
    (tmp_path / "corpus.jsonl").write_text("{}\n")
    for target in (tmp_path, tmp_path / "."):
        with pytest.raises(UsageError, match="holds the input"):
            check_folder(target, force=True, inputs=[tmp_path / "corpus.jsonl"])
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="exists and is not a folder"):
        check_folder(tmp_path / "file", force=True)


def test_a_killed_writer_leaves_no_target_and_its_leftover_is_cleaned(tmp_path):
    script = ("import sys, time\nfrom evalkit.io.writing.folders import staged_folder\n"
              "with staged_folder(sys.argv[1]) as s:\n    (s / 'part').write_bytes(b'x')\n    print('in', flush=True)\n    time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "model")], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "in"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    left = _names(tmp_path)
    assert "model" not in left and len(left) == 1 and left[0].endswith(".tmp")
    assert clean_stale_temporaries(tmp_path) == [str(tmp_path / left[0])] and _names(tmp_path) == []


@pytest.mark.neural
def test_evalkit_train_writes_its_folder_whole_and_never_over_an_input(tmp_path):
    pytest.importorskip("sentence_transformers")
    from support.tiny_models import tiny_bert

    docs = {"d1": "sea ice melts in the arctic", "d2": "vitamin d and bone fractures", "d3": "coral reefs bleach"}
    queries = {"q1": "arctic sea ice", "q2": "vitamin fractures"}
    encoder = tiny_bert(tmp_path / "encoder", texts=[*docs.values(), *queries.values()])
    data = tmp_path / "data"
    data.mkdir()
    (data / "corpus.jsonl").write_text("".join(f'{{"_id": "{d}", "text": "{t}"}}\n' for d, t in docs.items()))
    (data / "queries.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in queries.items()))
    (data / "train.qrels").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    common = ["dense", "--corpus", data / "corpus.jsonl", "--train-queries", data / "queries.tsv", "--train-qrels",
              data / "train.qrels", "--set", f"model={encoder}", "--set", "epochs=1", "--set", "train_batch_size=2",
              "--set", "n_hard_negatives=0", "--set", "query_prefix=", "--set", "passage_prefix=", "--set", "device=cpu"]
    refused = run_cli("train", *common, "--out", data, "--force")
    assert refused.returncode == 2 and "holds the input" in refused.stderr and "Traceback" not in refused.stderr
    assert _names(data) == ["corpus.jsonl", "queries.tsv", "train.qrels"]
    out = tmp_path / "model"
    done = run_cli("train", *common, "--out", out)
    assert done.returncode == 0, done.stderr
    assert "evalkit-system.json" in _names(out) and "training.manifest.json" in _names(out)
    assert not [name for name in _names(tmp_path) if name.startswith(".")]  # no staged folder left behind
    before = {name: (out / name).stat().st_mtime_ns for name in _names(out)}
    failed = run_cli("train", *common[:-2], "--set", "model=" + str(tmp_path / "no-such-model"), "--out", out, "--force")
    assert failed.returncode != 0 and "Traceback" not in failed.stderr
    assert {name: (out / name).stat().st_mtime_ns for name in _names(out)} == before  # the trained folder as it was
