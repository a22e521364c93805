"""Assembling what compare, report and leaderboard print: tables, figures, Markdown.

``tables`` holds the number formatting and the text/Markdown table builders,
``figures`` the matplotlib PNGs (Agg backend, imported lazily), ``analysis``
the per-query breakdowns (first relevant rank, query length, wins and
losses), and one module per command output.
"""
