"""A task's metrics from any sequence of names, as ``Task.metrics`` and ``Task.score`` declare (``str | Sequence[str]``)."""
from __future__ import annotations

from collections import UserList

import pytest

from evalkit.core.errors import UsageError
from evalkit.metrics import parse_metrics
from evalkit.tasks import get_task
from evalkit.tasks.base import Task, metric_names


class PlainTask(Task):
    """A task that keeps :meth:`Task.metrics` (not registered)."""

    name = "plain-test-task"
    default_metrics = "map"

    def official_metrics(self):
        return parse_metrics("ndcg@10")


@pytest.mark.parametrize("task", [PlainTask(), get_task("trec")], ids=["Task", "TrecTask"])
def test_a_sequence_that_is_not_a_list_reads_as_the_list(task):
    assert task.metrics(UserList(["map", "mrr"])) == task.metrics(["map", "mrr"])


def test_lists_tuples_and_strings_are_passed_on_unchanged():
    names = ["map"]
    assert metric_names(names) is names
    assert metric_names(("map",)) == ("map",)
    assert metric_names("map mrr") == "map mrr"


@pytest.mark.parametrize("task", [PlainTask(), get_task("trec")], ids=["Task", "TrecTask"])
def test_what_is_not_names_is_still_refused_with_one_line(task):
    with pytest.raises(UsageError, match="not int 5"):
        task.metrics(5)
