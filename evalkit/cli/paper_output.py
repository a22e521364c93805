"""The overview-paper options of ``evalkit leaderboard``: --latex, --csv, --figures (with --highlight), --group-by."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import click

from evalkit.io.transactions import announce

from evalkit.cli.pool import GROUP_BY_HELP, GROUP_ON_OPTION


@dataclass(frozen=True)
class Exports:
    latex: str | None = None
    csv: str | None = None
    figures: str | None = None
    highlight: str | None = None
    group_by: str | None = None
    group_on: str = "name"

    def __bool__(self) -> bool:
        return bool(self.latex or self.csv or self.figures)

    def targets(self) -> list[str]:
        from evalkit.report.overview import targets

        return targets(self.latex, self.csv, self.figures) if self else []

    def write(self, board, manifest, force: bool) -> None:
        from evalkit.report.overview import write_overview

        if not self:
            return
        written = write_overview(board, manifest, latex=self.latex, csv=self.csv, figures=self.figures, highlight=self.highlight,
                                 group_by=self.group_by, group_on=self.group_on, force=force)
        announce(f"wrote {', '.join(written)}")


OPTIONS = {
    "latex": click.option("--latex", type=click.Path(dir_okay=False), default=None,
                          help="Write the leaderboard as a LaTeX table (booktabs; a document that compiles as is), e.g. table.tex."),
    "csv": click.option("--csv", type=click.Path(dir_okay=False), default=None, help="Write the leaderboard as CSV for spreadsheets."),
    "figures": click.option("--figures", type=click.Path(file_okay=False), default=None,
                            help="Write the per-topic figures into this folder: topics.png/.pdf (best, median, worst run per "
                                 "topic, --highlight overlaid) and heatmap.png/.pdf (runs x topics)."),
    "highlight": click.option("--highlight", default=None, help="The run the per-topic figure marks (file, name or rank; default: #1)."),
    "group_by": click.option("--group-by", default=None, help=GROUP_BY_HELP + " The LaTeX table and CSV then show each team's best run."),
    "group_on": GROUP_ON_OPTION,
}


def overview_options(command):
    """Add the options; the command receives them as one ``exports`` (:class:`Exports`)."""
    @functools.wraps(command)
    def with_exports(*args, **kwargs):
        given = {name: kwargs.pop(name) for name in OPTIONS}
        return command(*args, exports=Exports(**given), **kwargs)

    for option in reversed(OPTIONS.values()):
        with_exports = option(with_exports)
    return with_exports
