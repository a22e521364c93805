"""BGE reranker ensemble (Ant Bridge, ClimateCheck 2025 winner): fine-tuned cross-encoders fused by RRF.

Each member is a cross-encoder (default bases ``BAAI/bge-reranker-large`` and
``BAAI/bge-reranker-v2-m3``) fine-tuned on triplets ``(q, d+, d-)`` with the
margin ranking loss ``max(0, m - (s(q, d+) - s(q, d-)))``. Per positive it sees
``random_negatives`` random documents and ``hard_negatives`` sampled from the
top ``hard_pool`` non-relevant documents of a BM25 top-``pool_depth`` pool
re-ranked by the base model. One member per configuration (model, margin,
batch size, learning rate, seed). At rerank time every member re-scores the top
``depth`` of the input run and the member runs are fused with reciprocal rank
fusion, ``RRF(d) = sum_m 1 / (k + rank_m(d))`` (Cormack et al., SIGIR 2009),
through :func:`evalkit.fusion.fuse`; the rest of the input run stays below.
The ensemble is a composite reranker: it implements the listwise hook
(:meth:`RerankerEnsemble.score_lists`: every member scores the candidates
through its own model call, then RRF) and the base class owns the rest.

Configurations (option ``configs``) are a list whose items are either tables
(TOML ``[[configs]]`` / dicts) or compact strings of ``key=value`` pairs joined
by ``;`` -- ``"model=BAAI/bge-reranker-large;margin=1;batch_size=16;lr=2e-5;seed=42"``
(a string without ``=`` is a model name). Missing keys take the ensemble's
``margin``, ``batch_size``, ``lr`` and ``seed`` options. With no ``configs``,
there is one configuration per entry of ``models``. The members are
:class:`~evalkit.systems.cross_encoder.CrossEncoderReranker` systems (their
training in :mod:`evalkit.systems.cross_encoder_training`).
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, ClassVar, Mapping

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Qrels, Run
from evalkit.core.errors import UsageError
from evalkit.pipelines.registry import register_system
from evalkit.pipelines.stages import LOCAL, Candidates, Engine, Reranker, check_fields, merge_reranked, option
from evalkit.systems._models.modelio import device_option, precision_option
from evalkit.systems.cross_encoder import CrossEncoderReranker

DEFAULT_MODELS = ["BAAI/bge-reranker-large", "BAAI/bge-reranker-v2-m3"]
DEFAULT_DEPTH = 10  # the class's default_depth and the depth option's default
CONFIG_KEYS = {"model": str, "margin": float, "batch_size": int, "lr": float, "seed": int}


@dataclasses.dataclass(frozen=True)
class MemberConfig:
    """One ensemble member: base model and training hyper-parameters."""

    model: str
    margin: float
    batch_size: int
    lr: float
    seed: int


@dataclasses.dataclass
class EnsembleOptions:
    models: list[str] = option(DEFAULT_MODELS, "base cross-encoders (one member each when CONFIGS is empty)")
    configs: list[Any] = option([], "member configurations: tables or 'model=M;margin=1;batch_size=16;lr=2e-5;seed=42' strings")
    margin: float = option(1.0, "default margin m of the ranking loss max(0, m - (s+ - s-))")
    batch_size: int = option(16, "default training batch size (triplets)")
    lr: float = option(2e-5, "default AdamW learning rate")
    seed: int = option(42, "default seed")
    head_lr: float = option(0.0, "learning rate of a fresh scoring head (0: the member's lr)")
    epochs: int = option(1, "training epochs per member")
    warmup: float = option(0.1, "fraction of steps with linear warm-up")
    random_negatives: int = option(10, "random negatives per positive")
    hard_negatives: int = option(5, "hard negatives per positive, from the re-ranked BM25 pool")
    pool_depth: int = option(1000, "BM25 candidates per training query (the hard-negative pool)")
    hard_pool: int = option(500, "hard negatives are drawn from the top HARD_POOL non-relevant of the pool")
    pool_rerank: bool = option(True, "re-rank the pool with the base model before taking its top (off: BM25 order)")
    depth: int = option(DEFAULT_DEPTH, "rerank the top DEPTH documents of the input run")
    rrf_k: int = option(60, "RRF constant k in 1 / (k + rank)")
    fields: list[str] = option(["title", "text"], "document fields joined as the document text")
    max_length: int = option(512, "maximum tokens of query + document")
    eval_batch_size: int = option(32, "scoring batch size (pairs)")
    device: str = device_option()
    precision: str = precision_option()
    show_progress: bool = option(True, "progress of scoring (a bar on a terminal, plain lines in a log); training always shows its own")


def parse_config(item: Any, defaults: EnsembleOptions) -> MemberConfig:
    """A member configuration from a table or a ``key=value;...`` string (missing keys: defaults)."""
    if isinstance(item, str):
        text = item.strip()
        if "=" not in text:
            table: dict[str, Any] = {"model": text}
        else:
            table = {}
            for part in filter(None, (p.strip() for p in text.split(";"))):
                key, sep, value = part.partition("=")
                if not sep:
                    raise UsageError(f"ensemble config {item!r}: {part!r} is not key=value")
                table[key.strip().replace("-", "_")] = value.strip()
    elif isinstance(item, Mapping):
        table = {str(k).replace("-", "_"): v for k, v in item.items()}
    else:
        raise UsageError(f"ensemble config {item!r}: expected a table or a 'key=value;...' string")
    unknown = sorted(set(table) - set(CONFIG_KEYS))
    if unknown:
        raise UsageError(f"ensemble config {item!r}: unknown key {unknown[0]!r} (known: {', '.join(CONFIG_KEYS)})")
    values = {key: table.get(key, getattr(defaults, key, None)) for key in CONFIG_KEYS}
    if values["model"] is None:
        raise UsageError(f"ensemble config {item!r}: no model")
    try:
        typed = {key: CONFIG_KEYS[key](value) for key, value in values.items()}
    except (TypeError, ValueError):
        raise UsageError(f"ensemble config {item!r}: bad value (margin, lr: numbers; batch_size, seed: integers)") from None
    if typed["batch_size"] <= 0 or typed["lr"] <= 0 or typed["margin"] < 0:
        raise UsageError(f"ensemble config {item!r}: batch_size and lr must be positive, margin >= 0")
    return MemberConfig(**typed)


def rerank_run(member: CrossEncoderReranker, corpus: Corpus, queries: Queries, run: Run, depth: int) -> Run:
    """``run`` re-ranked to ``depth`` by ``member``'s (base) model: the hard-negative pool of training."""
    return member.rerank(corpus, queries, run, depth)


@register_system
class RerankerEnsemble(Reranker):
    """Cross-encoders fine-tuned with a margin ranking loss, fused by RRF (Ant Bridge, ClimateCheck 2025)."""

    name = "reranker-ensemble"
    distributed = "each member's score_pairs, units of whole batches"
    description = "ensemble of margin-loss fine-tuned cross-encoders (BGE rerankers by default), fused by RRF"
    Options = EnsembleOptions
    learnable = True
    default_depth: ClassVar[int] = DEFAULT_DEPTH

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        from evalkit.systems._models.modelio import check_torch_precision

        check_torch_precision(self.name, getattr(self.options, "precision", "auto"))
        self.member_configs = self.parse_configs()
        self.members: list[CrossEncoderReranker] = []

    def parse_configs(self) -> list[MemberConfig]:
        o = self.options
        items = list(o.configs) or list(o.models)
        if not items:
            raise UsageError("reranker-ensemble needs at least one model or configuration")
        return [parse_config(item, o) for item in items]

    def new_member(self, config: MemberConfig) -> CrossEncoderReranker:
        """A cross-encoder system for ``config`` (weights loaded lazily from the base model)."""
        o = self.options
        return CrossEncoderReranker(
            model=config.model, fields=list(o.fields), depth=o.depth, max_length=o.max_length, batch_size=config.batch_size,
            eval_batch_size=o.eval_batch_size, epochs=o.epochs, lr=config.lr, head_lr=o.head_lr, warmup=o.warmup, seed=config.seed,
            device=o.device, precision=o.precision, show_progress=o.show_progress,
        )

    # ----------------------------------------------------------------- learning
    def fit(self, corpus: Corpus, queries: Queries, qrels: Qrels, first_stage: Run | None = None) -> "RerankerEnsemble":
        """Fine-tune one member per configuration on margin-loss triplets (see module docstring).

        ``first_stage`` is the candidate pool of the training queries (default:
        the registered ``bm25`` system, stemmed, to ``pool_depth``).
        """
        from evalkit.systems.cross_encoder_training import (
            check_training_data,
            mine_candidates,
            negative_pools,
            train_triplets,
            triplets,
        )

        o = self.options
        check_fields(corpus, o.fields)
        train_queries, positives = check_training_data(corpus, queries, qrels)
        pool = first_stage if first_stage is not None else mine_candidates(corpus, train_queries, o.pool_depth)
        hard_pools: dict[str, dict[str, list[str]]] = {}  # base model -> query -> ranked non-relevant docs
        members = []
        configs = self.member_configs
        for number, config in enumerate(configs, start=1):
            member = self.new_member(config)
            if config.model not in hard_pools:
                ranked = pool
                if o.pool_rerank and o.hard_negatives > 0:
                    ranked = rerank_run(member, corpus, train_queries, pool, o.pool_depth)
                hard_pools[config.model] = negative_pools(ranked, positives, o.hard_pool)
            items = triplets(corpus, positives, hard_pools[config.model], o.hard_negatives, o.random_negatives, config.seed)
            train_triplets(member.model, items, corpus, train_queries, member.options, config.margin,
                           desc=f"{self.name} fit, member {number} of {len(configs)}")
            member.trained = True
            members.append(member)
        self.members = members
        return self

    # ----------------------------------------------------------------- reranking
    def active_members(self) -> list[CrossEncoderReranker]:
        """The trained members, or (untrained) the base models of the configurations used as they are."""
        if not self.members:
            self.members = [self.new_member(config) for config in self.member_configs]
        return self.members

    def member_runs(self, corpus: Corpus, queries: Queries, run: Run, depth: int | None = None, *, engine: Engine = LOCAL) -> list[Run]:
        """Each member's rerank of the top ``depth`` of ``run`` on ``engine`` (named ``member-i``)."""
        depth = self.rerank_depth(depth)
        return [m.rerank(corpus, queries, run, depth, engine=engine).with_name(f"member-{i}") for i, m in enumerate(self.active_members())]

    def fused_scores(self, member_runs: list[Run], depth: int) -> dict[str, dict[str, float]]:
        """``{query: {doc: score}}`` of the RRF of the members' top ``depth`` (:func:`evalkit.fusion.fuse`)."""
        from evalkit.fusion import fuse

        if len(member_runs) == 1:
            return member_runs[0].to_scores(depth)
        return fuse(member_runs, method="rrf", rrf_k=self.options.rrf_k, depth=depth, name=self.name).to_scores(depth)

    def fuse_members(self, run: Run, member_runs: list[Run], depth: int | None = None) -> Run:
        """RRF of the members' top ``depth``, the rest of ``run`` below (what :meth:`rerank` returns)."""
        depth = self.rerank_depth(depth)
        return merge_reranked(run, self.fused_scores(member_runs, depth), depth).with_name(self.name)

    def score_lists(self, candidates: Candidates, engine: Engine = LOCAL) -> dict[str, dict[str, float]]:
        """The listwise hook: each member scores the candidates (its model call on ``engine``), then RRF."""
        runs = []
        for i, member in enumerate(self.active_members()):
            runs.append(Run.from_scores(member.score_lists(candidates, engine), name=f"member-{i}"))
        fused = self.fused_scores(runs, candidates.depth)
        return {q: fused.get(q, {}) for q in candidates.docs}

    # ----------------------------------------------------------------- persistence
    def config(self) -> dict[str, Any]:
        return {**super().config(), "members": len(self.members)}

    def save(self, folder: str | Path) -> Path:
        """``folder/evalkit-system.json`` + ``folder/member-<i>/`` (each a saved cross-encoder)."""
        folder = super().save(folder)
        for i, member in enumerate(self.members):
            member.save(folder / f"member-{i}")
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> "RerankerEnsemble":
        system = super().load(folder)
        count = int(json.loads((Path(folder) / "evalkit-system.json").read_text()).get("members", 0))
        system.members = [CrossEncoderReranker.load(Path(folder) / f"member-{i}") for i in range(count)]  # type: ignore[attr-defined]
        return system  # type: ignore[return-value]
