import pytest

from evalkit.core.listparse import ListLiteralError, format_id_list, parse_id_list


@pytest.mark.parametrize(
    "text, expected",
    [
        ("['a1', 'b2']", ["a1", "b2"]),
        ('["a1","b2"]', ["a1", "b2"]),
        ("[]", []),
        ("  ['x']  ", ["x"]),
        ("['a', 'b',]", ["a", "b"]),
        ("['it''s']", None),  # implicit concatenation is not a plain list item -> ast path
        ("['a\\'b']", ["a'b"]),
        ('["a", \'b\']', ["a", "b"]),
    ],
)
def test_parses_lists_of_strings(text, expected):
    if expected is None:
        assert parse_id_list(text) == ["its"]
    else:
        assert parse_id_list(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "abc",
        "[1, 2]",
        "['a', 3]",
        "[__import__('os').system('echo pwned')]",
        "__import__('os').system('echo pwned')",
        "['a'] + ['b']",
        "[['a']]",
        "['a'",
        "{'a': 1}",
        "[f'{x}']",
        "('a', 'b')",
    ],
)
def test_rejects_everything_else(text):
    with pytest.raises(ListLiteralError):
        parse_id_list(text)


def test_format_round_trip():
    ids = ["26kx1b0h", "evf9nz05"]
    assert format_id_list(ids) == "['26kx1b0h', 'evf9nz05']"
    assert parse_id_list(format_id_list(ids)) == ids
