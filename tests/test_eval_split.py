"""The eval set's tuning and held-out halves (fixtures/eval/README.md): nothing near-identical leaks from one
half into the other, and each half holds every kind of question."""

from __future__ import annotations

from collections import Counter

from tests.evalset import HALVES, load_queries, query_key, split_halves, template_pairs


def _halves_of_answers() -> dict[str, set[str]]:
    halves = split_halves()
    found: dict[str, set[str]] = {}
    for item in load_queries():
        for record_id in item["expected"]:
            key = f"conversation-{record_id.split('-')[1]}" if record_id.startswith("c-") else record_id
            found.setdefault(key, set()).add(halves[query_key(item)])
    return found


def test_every_query_is_in_exactly_one_half_and_the_split_is_stable() -> None:
    first, again = split_halves(), split_halves()
    assert first == again
    assert set(first.values()) == set(HALVES)
    assert len(first) == len({query_key(item) for item in load_queries()})


def test_queries_sharing_an_answer_or_a_conversation_fall_in_one_half() -> None:
    split_answers = {key: halves for key, halves in _halves_of_answers().items() if len(halves) > 1}
    assert not split_answers


def test_memories_from_one_template_fall_in_one_half() -> None:
    """ "Lin's birthday is March 14." and "Sam's birthday is August 2.", or two memories naming PR #342:
    tuning on a question about one would be judged on the other."""
    pairs = template_pairs()
    assert ("m-003", "m-093") in pairs and ("m-030", "m-097") in pairs and ("m-036", "m-111") in pairs
    answered = _halves_of_answers()
    joined = [answered[a] | answered[b] for a, b in pairs if a in answered and b in answered]
    assert joined and all(len(halves) == 1 for halves in joined)


def test_a_year_is_not_an_identifier_that_joins_memories() -> None:
    assert ("m-049", "m-064") not in template_pairs()  # both say 2024, about different things


def test_each_half_holds_every_kind_of_question() -> None:
    halves = split_halves()
    kinds = Counter((item["kind"], halves[query_key(item)]) for item in load_queries())
    for kind in {kind for kind, _ in kinds}:
        assert all(kinds[(kind, half)] > 0 for half in HALVES), kind
    sizes = Counter(halves.values())
    assert abs(sizes["tuning"] - sizes["held-out"]) <= 0.1 * len(halves)
