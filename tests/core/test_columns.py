"""Column aliases live in one table (evalkit.core.columns) and, for a task's own files, in its package's columns.py;
no other module spells an alias set of its own."""
from __future__ import annotations

import ast
from pathlib import Path

from evalkit.core import columns

EVALKIT = Path(columns.__file__).parents[1]  # evalkit/
QUERY_NAMES = set(columns.QUERY_ID) | set(columns.COLLECTION_QUERY_ID) | set(columns.REFERENCE_QUERY_ID) | set(columns.LIST_RUN_QUERY_ID)
DOC_NAMES = set(columns.DOC_ID) | set(columns.COLLECTION_DOC_ID) | set(columns.REFERENCE_DOC_ID) | set(columns.BEIR_DOC_ID)


def _shown(path: Path) -> str:
    return str(path.relative_to(EVALKIT.parent)) if EVALKIT.parent in path.parents else path.name


def alias_sets(path: Path) -> list[str]:
    """Literal tuples, lists and sets holding two or more query-id names or two or more document-id names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if len(names & QUERY_NAMES) >= 2 or len(names & DOC_NAMES) >= 2:
                found.append(f"{_shown(path)}:{node.lineno}: {sorted(names)}")
    return found


def _holds_aliases(path: Path) -> bool:
    """evalkit/core/columns.py, and a task package's columns.py (evalkit/tasks/<task>/columns.py)."""
    relative = path.relative_to(EVALKIT).parts
    return relative == ("core", "columns.py") or (len(relative) == 3 and relative[0] == "tasks" and relative[2] == "columns.py")


def test_id_aliases_are_spelled_only_in_evalkit_columns():
    spelled = [hit for path in sorted(EVALKIT.rglob("*.py")) if not _holds_aliases(path) for hit in alias_sets(path)]
    assert not spelled, spelled


def test_an_alias_set_spelled_elsewhere_is_found(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('NAMES = ("qid", "query_id")\n')
    assert alias_sets(probe) == ["probe.py:1: ['qid', 'query_id']"]


def test_find_is_case_insensitive_and_alias_order_decides():
    assert columns.find(["QID", "Query_ID"], columns.QUERY_ID) == "Query_ID"
    assert columns.find([" DocNo "], columns.DOC_ID) == " DocNo "
    assert columns.find(["text"], columns.DOC_ID) is None
