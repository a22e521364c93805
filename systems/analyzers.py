"""Text analyzers for lexical retrieval: a small registry of ``text -> list[str]``.

=============  ================================================================
name           tokens
=============  ================================================================
whitespace     ``text.split()``: no lower-casing, punctuation kept
simple         lower-cased runs of letters and digits (Unicode ``[^\\W_]+``)
stem           ``simple`` minus the Lucene English stop words (33, the list
               Anserini's BM25 baselines for BEIR use), then the Snowball
               English (Porter2) stemmer of PyStemmer, with a word cache
spacy-lemma    spaCy ``en_core_web_sm`` lemmas, lower-cased, spaCy stop words
               dropped, only alphabetic or numeric tokens kept -- the
               preprocessing of the AIRwaves CheckThat! 2025 Task 4b BM25
               (needs ``pip install spacy && python -m spacy download en_core_web_sm``)
=============  ================================================================

>>> get_analyzer("stem")("The mice were running in 2 mazes.")
['mice', 'were', 'run', '2', 'maze']

Every analyzer is an :class:`Analyzer`: call it on one text, or
:meth:`Analyzer.many` on a list (spaCy batches there; the others map with a
progress bar on large inputs). Register more with :func:`register_analyzer`.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable

from evalkit.core.errors import UsageError

WORD = re.compile(r"[^\W_]+")

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (Anserini's default English stop list).
LUCENE_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such "
    "that the their then there these they this to was will with".split()
)
SPACY_HINT = "pip install spacy && python -m spacy download en_core_web_sm"


class Analyzer:
    """A named ``text -> tokens`` function."""

    name: str = ""

    def __call__(self, text: str) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def many(self, texts: Iterable[str], total: int | None = None, desc: str = "analyzing") -> Iterable[list[str]]:
        """Tokens of each text, lazily; progress when there are many."""
        from evalkit.core.progress import progress

        total = total if total is not None else (len(texts) if hasattr(texts, "__len__") else None)  # type: ignore[arg-type]
        for text in progress(texts, total=total, desc=f"{desc} ({self.name})", unit="text", enabled=(total or 0) >= 5000):
            yield self(text)

    def __repr__(self) -> str:
        return f"<analyzer {self.name}>"


class Whitespace(Analyzer):
    name = "whitespace"

    def __call__(self, text: str) -> list[str]:
        return text.split()


class Simple(Analyzer):
    name = "simple"

    def __call__(self, text: str) -> list[str]:
        return WORD.findall(text.lower())


class Stem(Analyzer):
    """Lower-case, Lucene stop words out, Snowball English stemmer (Porter, 1980; Porter2, 2001)."""

    name = "stem"

    def __init__(self, stop_words: frozenset[str] = LUCENE_STOP_WORDS) -> None:
        from evalkit.core.errors import require

        Stemmer = require("Stemmer", "analyzer 'stem' (PyStemmer)")
        self._stem_word = Stemmer.Stemmer("english").stemWord
        self._stop = stop_words
        self._cache: dict[str, str] = {}

    def __call__(self, text: str) -> list[str]:
        cache, stop = self._cache, self._stop
        out = []
        for word in WORD.findall(text.lower()):
            stem = cache.get(word)
            if stem is None:
                if word in stop:
                    continue
                stem = cache[word] = self._stem_word(word)
            out.append(stem)
        return out


class SpacyLemma(Analyzer):
    """spaCy lemmas without stop words, alphabetic or numeric tokens only (AIRwaves, CheckThat! 2025 4b)."""

    name = "spacy-lemma"

    def __init__(self, model: str = "en_core_web_sm") -> None:
        try:
            import spacy
        except ImportError:
            raise UsageError(f"analyzer 'spacy-lemma' needs spaCy and its English model: {SPACY_HINT}") from None
        try:
            self._nlp = spacy.load(model, disable=["parser", "ner"])
        except OSError:
            raise UsageError(f"analyzer 'spacy-lemma' needs the spaCy model {model}: {SPACY_HINT}") from None

    @staticmethod
    def _tokens(doc) -> list[str]:
        return [t.lemma_.lower() for t in doc if not t.is_stop and (t.is_alpha or t.is_digit or t.like_num)]

    def __call__(self, text: str) -> list[str]:
        return self._tokens(self._nlp(text))

    def many(self, texts: Iterable[str], total: int | None = None, desc: str = "analyzing") -> Iterable[list[str]]:
        from evalkit.core.progress import progress

        total = total if total is not None else (len(texts) if hasattr(texts, "__len__") else None)  # type: ignore[arg-type]
        docs = self._nlp.pipe(texts, batch_size=256)
        for doc in progress(docs, total=total, desc=f"{desc} ({self.name})", unit="text", enabled=(total or 0) >= 500):
            yield self._tokens(doc)


ANALYZERS: dict[str, Callable[[], Analyzer]] = {}


def register_analyzer(name: str, factory: Callable[[], Analyzer]) -> None:
    """Make ``factory()`` available as ``get_analyzer(name)``."""
    ANALYZERS[name] = factory


for _cls in (Whitespace, Simple, Stem, SpacyLemma):
    register_analyzer(_cls.name, _cls)

_INSTANCES: dict[str, Analyzer] = {}


def get_analyzer(name: str) -> Analyzer:
    """The analyzer called ``name`` (one shared instance, so caches are kept)."""
    if name not in ANALYZERS:
        raise UsageError(f"unknown analyzer {name!r} (known: {', '.join(sorted(ANALYZERS))})")
    if name not in _INSTANCES:
        _INSTANCES[name] = ANALYZERS[name]()
    return _INSTANCES[name]
