"""Column aliases live in one table (evalkit.core.columns); no other module spells an alias set of its own."""
from __future__ import annotations

import ast
from pathlib import Path

from evalkit.core import columns

EVALKIT = Path(columns.__file__).parent
QUERY_NAMES = set(columns.QUERY_ID) | set(columns.COLLECTION_QUERY_ID) | set(columns.REFERENCE_QUERY_ID) | set(columns.LIST_RUN_QUERY_ID)
DOC_NAMES = set(columns.DOC_ID) | set(columns.COLLECTION_DOC_ID) | set(columns.REFERENCE_DOC_ID) | set(columns.BEIR_DOC_ID)


def alias_sets(path: Path) -> list[str]:
    """Literal tuples, lists and sets holding two or more query-id names or two or more document-id names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if len(names & QUERY_NAMES) >= 2 or len(names & DOC_NAMES) >= 2:
                found.append(f"{path.relative_to(EVALKIT.parent)}:{node.lineno}: {sorted(names)}")
    return found


def test_id_aliases_are_spelled_only_in_evalkit_columns():
    spelled = [hit for path in sorted(EVALKIT.rglob("*.py")) if path.name != "columns.py" for hit in alias_sets(path)]
    assert not spelled, spelled


def test_find_is_case_insensitive_and_alias_order_decides():
    assert columns.find(["QID", "Query_ID"], columns.QUERY_ID) == "Query_ID"
    assert columns.find([" DocNo "], columns.DOC_ID) == " DocNo "
    assert columns.find(["text"], columns.DOC_ID) is None
