import os

from strata_recall.domain.ids import new_id
from strata_recall.domain.text import (
    STOPWORDS,
    analyze,
    content_hash,
    estimate_tokens,
    keywords,
    normalize,
)
from strata_recall.stores.sqlite.store import fts_query


def test_normalize_folds_case_width_and_whitespace() -> None:
    assert normalize("  Ｈello\tWORLD \n") == "hello world"
    assert content_hash("Hello  world") == content_hash("hello world")
    assert content_hash("hello world") != content_hash("hello worlds")


def test_keywords_drop_stop_words_and_repeats() -> None:
    assert keywords("What is Ana's favourite tea? Tea!") == ["ana", "favourite", "tea"]


def test_token_estimate_follows_chars_per_token() -> None:
    assert estimate_tokens("") == 1
    assert estimate_tokens("x" * 35) == 10


def test_fts_query_quotes_content_words_only() -> None:
    assert fts_query('When did "Ana" go to Porto?') == '"ana" OR "go" OR "porto"'
    assert fts_query("the of and") is None


def test_ids_are_unique_and_time_ordered() -> None:
    ids = [new_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)


def test_a_forked_child_does_not_repeat_its_parents_random_bits() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids' random part, to the parent
        os.write(write, ",".join(new_id()[-12:] for _ in range(5)).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 4096).decode().split(",")
    assert len(child) == 5
    assert not set(child) & {new_id()[-12:] for _ in range(5)}


def test_analyze_folds_stems_and_drops_stop_words() -> None:
    from strata_recall.domain.text import analyze, index_tokens, search_text

    assert analyze("Caroline's paintings — she went CAMPING in Zürich, 2023!") == [
        "carolin", "paint", "went", "camp", "zurich", "2023"]
    assert analyze("painted") == analyze("painting") == analyze("paints")
    assert analyze("the of and") == []
    # what a store does with an analysed text gives the analysed tokens back unchanged
    text = search_text("Melanie's kids love the beach at Naïve Bay")
    assert index_tokens(text) == analyze("Melanie's kids love the beach at Naïve Bay")


def test_rare_terms_fill_the_scored_rows_budget_rarest_first() -> None:
    from strata_recall.stores.common import split_by_frequency

    counts = {"jack": 11_000, "learn": 146, "day": 33_000, "medic": 18}
    assert split_by_frequency(counts, 5_000) == (["medic", "learn"], ["jack", "day"])
    assert split_by_frequency(counts, 20_000) == (["medic", "learn", "jack"], ["day"])
    assert split_by_frequency(counts, 10**9) == (["medic", "learn", "jack", "day"], [])
    # the rarest term that holds any row is kept whatever it holds; empty terms cost nothing
    assert split_by_frequency({"pet": 0, "day": 33_000, "jack": 11_000}, 5_000) == (
        ["pet", "jack"], ["day"])


def test_a_bounded_match_puts_each_row_in_exactly_one_branch() -> None:
    from strata_recall.stores.sqlite.store import fts_match

    assert fts_match(["a", "b"]) == '"a" OR "b"'
    assert fts_match(["a"], ["c", "d"]) == '(("a") NOT ("c" OR "d")) OR (("a") AND ("c" OR "d"))'


def test_stemming_from_several_threads_at_once_gives_each_its_own_words() -> None:
    """A remember stems on the caller's thread while a pipeline job stems on the write-behind
    thread: a stemmer shared between them corrupted words or raised IndexError."""
    import random
    import string
    import threading

    import snowballstemmer

    rng = random.Random(7)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10)))
             + rng.choice(("ing", "ed", "ness", "ation", "ly")) for _ in range(100_000)]
    words = [w for w in words if w not in STOPWORDS]
    reference = snowballstemmer.stemmer("english")
    expected = {w: reference.stemWord(w) for w in words}
    wrong: list[str] = []

    def stem_all(chunk: list[str]) -> None:
        try:
            wrong.extend(w for w in chunk if analyze(w) != [expected[w]])
        except Exception as exc:  # noqa: BLE001 - any failure in a thread fails the test
            wrong.append(repr(exc))

    threads = [threading.Thread(target=stem_all, args=(words[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
