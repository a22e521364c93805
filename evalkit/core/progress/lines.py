"""The plain progress line: ``[evalkit] WHAT: N/TOTAL UNIT (P%), RATE, ELAPSED elapsed, ~LEFT left, POSTFIX``."""
from __future__ import annotations


def clock_text(seconds: float) -> str:
    """``1:02:03``, ``4:05``, ``0:07``."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def rate_text(done: int, elapsed: float, unit: str) -> str:
    """``12.5 pair/s``, or ``3.2 s/batch`` below one a second."""
    if done <= 0 or elapsed <= 0:
        return f"- {unit}/s"
    rate = done / elapsed
    return f"{rate:,.1f} {unit}/s" if rate >= 1 else f"{1 / rate:,.1f} s/{unit}"


def line_of(desc: str, n: int, total: int | None, unit: str, elapsed: float, postfix: str = "", done: bool = False) -> str:
    """One plain line of a step's progress (``done``: its last)."""
    count = f"{n:,}/{total:,} {unit}" if total is not None else f"{n:,} {unit}"
    if total:
        count += f" ({100 * n / total:.0f}%)"
    parts = [count, rate_text(n, elapsed, unit), f"{clock_text(elapsed)} elapsed"]
    if not done and total and n and n < total:
        parts.append(f"~{clock_text((total - n) * elapsed / n)} left")
    if postfix:
        parts.append(postfix)
    return f"[evalkit] {desc + ': ' if desc else ''}{'done, ' if done else ''}{', '.join(parts)}"
