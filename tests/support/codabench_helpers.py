"""Helpers of the Codabench competition tests: small gold files of each built-in task's shape, zips, bundles taken apart."""
from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import yaml

from support.helpers import REPO

GOLD_4B = REPO / "gold" / "examples" / "tweets_gold.tsv"
RUN_4B = REPO / "gold" / "examples" / "tweets_run.tsv"
LABELS = ("Supports", "Refutes", "Not Enough Information")


def zip_of(files: dict[str, bytes | str], symlinks: dict[str, str] | None = None) -> bytes:
    """A zip holding ``files`` (and ``symlinks``: name -> target, stored as zip symbolic links)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)  # S_IFLNK | 0777
            archive.writestr(info, target)
    return buffer.getvalue()


def write_zip(path: Path, files: dict[str, bytes | str], **kwargs) -> Path:
    path.write_bytes(zip_of(files, **kwargs))
    return path


def unzip(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def competition_yaml(files: dict[str, bytes]) -> dict:
    return yaml.safe_load(files["competition.yaml"])


def with_yaml(files: dict[str, bytes], document: dict) -> dict[str, bytes]:
    return {**files, "competition.yaml": yaml.safe_dump(document, sort_keys=False).encode()}


def climatecheck_gold(path: Path, prefix: str, claims: int, seed: int) -> Path:
    """A ClimateCheck-shaped gold: 2 to 6 judged abstracts per claim (a mix of the three labels), 200 abstracts."""
    rng = random.Random(seed)
    rows = ["claim_id,claim,abstract_original_index,annotation"]
    for claim in range(claims):
        for abstract in rng.sample(range(200), rng.randint(2, 6)):
            rows.append(f"{prefix}{claim},claim {claim} about the climate,{abstract},{rng.choice(LABELS)}")
    path.write_text("\n".join(rows) + "\n")
    return path


def climatecheck_submission(gold: Path, seed: int, labels: bool = True, claims: int | None = None) -> str:
    """A ClimateCheck-shaped submission: 10 rows per claim (some judged abstracts, then others), ranks 1..10."""
    rng = random.Random(seed)
    judged: dict[str, list[str]] = {}
    for line in gold.read_text().splitlines()[1:]:
        claim, _, abstract, _ = line.split(",")
        judged.setdefault(claim, []).append(abstract)
    head = "claim_id,abstract_id,rank" + (",label" if labels else "")
    rows = [head]
    for claim in list(judged)[:claims]:
        found = rng.sample(judged[claim], rng.randint(0, len(judged[claim])))
        others = [str(a) for a in rng.sample(range(200, 400), 10)]
        for rank, abstract in enumerate((found + others)[:10], start=1):
            rows.append(f"{claim},{abstract},{rank}" + (f",{rng.choice(LABELS)}" if labels else ""))
    return "\n".join(rows) + "\n"


def trec_qrels(path: Path) -> Path:
    rng = random.Random(3)
    lines = [f"q{q} 0 d{d} {rng.choice([0, 1, 2])}" for q in range(12) for d in rng.sample(range(40), 5)]
    path.write_text("\n".join(lines) + "\n")
    return path


def trec_run(qrels: Path) -> str:
    rng = random.Random(4)
    lines = []
    for q in range(12):
        for rank, d in enumerate(rng.sample(range(40), 10), start=1):
            lines.append(f"q{q} Q0 d{d} {rank} {20 - rank}.5 sys")
    return "\n".join(lines) + "\n"
