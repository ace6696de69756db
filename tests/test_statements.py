"""The shared statement layer (store/shared/statements.py): each template says the same thing in both dialects,
and nothing but the dialect's fixed tokens and bound-parameter marks ever goes into a statement's text."""

from __future__ import annotations

import pytest

from openclaw_cli.memory.store.shared import statements as st

TEMPLATES = {
    name: value
    for name, value in vars(st).items()
    if name.isupper() and isinstance(value, str) and name[0] != "_"
}


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_a_template_binds_as_many_parameters_in_either_dialect(name: str) -> None:
    sqlite, postgres = st.SQLITE.sql(TEMPLATES[name]), st.POSTGRES.sql(TEMPLATES[name])
    assert "{" not in sqlite and "}" not in sqlite and "{" not in postgres
    assert sqlite.count("?") == postgres.count("%s") == TEMPLATES[name].count("{p}")
    assert "%s" not in sqlite and "?" not in postgres


def test_null_safe_equality_and_the_planner_mark_are_each_dialects_own() -> None:
    assert "+user_id IS ?" in st.SQLITE.sql(st.SAME_TEXT)
    assert " user_id IS NOT DISTINCT FROM %s" in st.POSTGRES.sql(st.SAME_TEXT)
    assert "+" not in st.POSTGRES.sql(st.SAME_TEXT).replace(st.SELECT_RECORDS, "")


def test_a_list_binds_as_marks_or_as_one_array_never_as_its_text() -> None:
    values = ["alice", "x') OR 1=1 --"]
    assert st.SQLITE.member("user_id", values) == ("user_id IN (?, ?)", ("alice", "x') OR 1=1 --"))
    assert st.POSTGRES.member("user_id", values) == ("user_id = ANY(%s)", (values,))


def test_an_empty_list_still_makes_a_statement() -> None:
    assert st.SQLITE.member("user_id", []) == ("user_id IN ()", ())
    assert st.POSTGRES.member("user_id", []) == ("user_id = ANY(%s)", ([],))


def test_a_long_list_goes_in_batches_of_marks_or_in_one_array() -> None:
    assert [len(b) for b in st.SQLITE.batches(range(1200))] == [500, 500, 200]
    assert [len(b) for b in st.POSTGRES.batches(range(1200))] == [1200]
    assert list(st.SQLITE.batches([])) == [] and list(st.POSTGRES.batches([])) == []
