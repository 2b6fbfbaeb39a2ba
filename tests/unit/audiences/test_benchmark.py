"""The hashing benchmark runs and reports in the shared result shape (speed is not asserted here)."""

from collections import Counter

from benchmarks.audience_hashing import run
from tests.audience_reference import generate_corpus

RESULT_KEYS = {"name", "value", "unit", "baseline", "ratio", "target", "passed", "notes"}


def test_benchmark_reports_both_implementations_side_by_side() -> None:
    # Given / When a tiny run (without the comparison with the code before, which unpacks an old commit)
    results = run(size=500, repeats=2, before=False)

    # Then
    assert [result["name"] for result in results] == [
        "audience_hashing.fast_path",
        "audience_hashing.reference",
        "audience_hashing.minimal_python",
        "audience_hashing.sha256_floor",
        "audience_hashing.bulk_engine",
    ]
    assert all(set(result) == RESULT_KEYS for result in results)
    assert results[0]["baseline"] == results[1]["value"]
    assert results[0]["unit"] == "users/s"
    assert results[0]["target"] == 300_000
    # and the bulk path beside the plain Python pass of the same run (its wall-time baseline)
    assert results[-1]["unit"] == "users/s"
    assert abs(results[-1]["ratio"] - results[-1]["value"] / results[-1]["baseline"]) <= 0.01


def test_corpus_names_repeat_as_in_a_real_list() -> None:
    # Given the benchmark's corpus at 20,000 users
    corpus = generate_corpus(20_000)

    # When its names are counted
    first_names = Counter(record["firstName"] for record in corpus)
    last_names = Counter(record["lastName"] for record in corpus)

    # Then they follow the census-fitted law (tests/audience_reference.py): ~10,500 distinct last names
    # expected among the common surnames plus ~2,000 from the long tail, ~3,900 distinct first names, and
    # the most common surname held by about 0.8 % of people: neither all distinct nor all alike
    assert 10_000 <= len(last_names) <= 15_000
    assert 3_000 <= len(first_names) <= 5_000
    assert 0.005 <= last_names["An"] / len(corpus) <= 0.012
