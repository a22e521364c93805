"""``evalkit judge SHEET --model M --out GRADED``: an LLM grades the empty rows of a judging sheet, resumably."""
from __future__ import annotations

import click

from evalkit.io.transactions import announce

from evalkit.cli.common import FORCE_OPTION, SEED


@click.command()
@click.argument("sheet", type=click.Path(dir_okay=False))
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="The graded sheet (relevance, judge and judge_error filled in; a .manifest.json beside it).")
@click.option("--backend", default="transformers", show_default=True,
              help="LLM backend: openai (any OpenAI-compatible endpoint), transformers (local model or .gguf), llamacpp.")
@click.option("--model", required=True, help="Model: endpoint model name (openai); hub name, folder, .gguf file or pkg:PACKAGE.")
@click.option("--base-url", default="", help="openai backend: the endpoint's base URL (default $OPENAI_BASE_URL).")
@click.option("--api-key", default="", envvar="OPENAI_API_KEY", show_envvar=True,
              help="openai backend: the endpoint's API key (never written to a manifest or the journal).")
@click.option("--prompt", "prompt_path", type=click.Path(dir_okay=False), default=None,
              help="Prompt file with {query} and {passage} (default: the UMBRELA prompt shipped with evalkit).")
@click.option("--max-grade", type=click.IntRange(1, 100), default=3, show_default=True, help="Grades are the integers 0..MAX.")
@click.option("--max-new-tokens", type=click.IntRange(1, 4096), default=32, show_default=True, help="Longest answer, in tokens.")
@click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True, help="Sampling temperature (0: greedy).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="The model's sampling seed.")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True,
              help="openai backend: requests in flight at once against the endpoint.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True, help="openai backend: seconds per request.")
@click.option("--retries", type=click.IntRange(0, 20), default=4, show_default=True, help="openai backend: retries of a failed request.")
@click.option("--batch-size", type=click.IntRange(1, 256), default=1, show_default=True, help="transformers backend: prompts generated together.")
@click.option("--device", default="auto", show_default=True, help="transformers backend: auto, cpu, cuda, mps.")
@click.option("--passage-words", type=click.IntRange(0, 100_000), default=400, show_default=True,
              help="Words of a passage put in the prompt (0: all).")
@click.option("--journal", "journal_path", type=click.Path(dir_okay=False), default=None,
              help="Append-only journal of every judgment (default OUT.journal.jsonl): a rerun resumes from it.")
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False), default=None,
              help="The backend's answer cache (default: evalkit's cache folder, one file per backend and model).")
@click.option("--no-cache", is_flag=True, help="Keep no answer cache (the journal still makes a rerun resume).")
@click.option("--human", "human_path", type=click.Path(dir_okay=False), default=None,
              help="Human qrels: the pairs they judge take their grade (judge human:ASSESSOR); the LLM grades the rest.")
@click.option("--assessor", default="assessor", show_default=True, help="The name in human:NAME for rows graded by people.")
@click.option("--queries", "queries_path", type=click.Path(dir_okay=False), default=None, help="Query texts, if the sheet has none.")
@click.option("--corpus", "corpus_path", type=click.Path(dir_okay=False), default=None, help="Document texts, if the sheet has none.")
@click.option("--trust-pickle", is_flag=True, help="Allow reading a pickled --corpus (unpickling runs code: trusted files only).")
@click.option("--sample", type=click.IntRange(min=1), default=None, help="Judge N seeded rows only (the output holds those rows).")
@click.option("--sample-seed", type=SEED, default=42, show_default=True, help="Seed of --sample's draw.")
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False), default=None,
              help="Also write a plain TREC qrels of the grades (unjudged rows left out) and its QRELS.judges.tsv provenance.")
@FORCE_OPTION
def judge(sheet, out_path, backend, model, base_url, api_key, prompt_path, max_grade, max_new_tokens, temperature, seed, concurrency, timeout,
          retries, batch_size, device, passage_words, journal_path, cache_path, no_cache, human_path, assessor, queries_path, corpus_path,
          trust_pickle, sample, sample_seed, qrels_path, force):
    """Grade the empty rows of SHEET (from evalkit pool) with an LLM: an UMBRELA-style 0-3 grade per (query, document).

    Deterministic (temperature 0, a seed); every judgment is journaled (fsynced)
    as it arrives, so an interrupted run, rerun with the same command, asks
    only for the rest. An answer with no grade on the scale is recorded as a
    one-line error (relevance -1: unjudged), never guessed. Every row says
    who judged it: llm:MODEL@PROMPT-SHA256 or human:ASSESSOR.
    """
    from evalkit.api.judge import backend_kind
    from evalkit.api.judge import judge as run_judge

    kind = backend_kind(backend)
    if kind == "openai":
        options = {"base_url": base_url, "api_key": api_key, "concurrency": concurrency, "timeout": timeout, "retries": retries}
    elif kind == "transformers":
        options = {"device": device, "batch_size": batch_size}
    else:
        options = {}
    options.update(cache=not no_cache, cache_path=cache_path)
    result = run_judge(sheet, out_path, backend=backend, model=model, prompt=prompt_path, max_grade=max_grade,
                       max_new_tokens=max_new_tokens, temperature=temperature, seed=seed, passage_words=passage_words,
                       journal=journal_path, human=human_path, assessor=assessor, queries=queries_path, corpus=corpus_path,
                       trust_pickle=trust_pickle, sample=sample, sample_seed=sample_seed, qrels_out=qrels_path,
                       backend_options=options, force=force)
    c = result.counts
    if c["journaled"]:
        click.echo(f"resumed: {c['journaled']:,} judgments taken from the journal", err=True)
    for line in result.errors[:5]:
        click.echo(f"warning: {result.sheet.path}: {line}", err=True)
    if len(result.errors) > 5:
        click.echo(f"warning: ... and {len(result.errors) - 5:,} more answers without a grade (judge_error column)", err=True)
    sources = f"{c['journaled']:,} from the journal, {c['asked'] - c['model_calls']:,} from the cache, {c['model_calls']:,} asked now"
    click.echo(f"{c['rows']:,} rows: {c['llm']:,} graded by {result.settings.judge} ({sources}), {c['human']:,} by people, "
               f"{c['errors']:,} answers without a grade (relevance -1)")
    announce(f"wrote {out_path}{f' and {qrels_path}' if qrels_path else ''}")
