"""The bounded memo table shared by the planner and the simulator's world caches."""
from mcbuild.compiler.core.memo import LRU


def test_lru_keeps_the_most_recently_used_and_makes_each_value_once():
    made: list[str] = []

    def make(key: str):
        return lambda: made.append(key) or key.upper()

    memo = LRU(2)
    assert memo.get_or_make("a", make("a")) == "A" and memo.get_or_make("b", make("b")) == "B"
    assert memo.get_or_make("a", make("a")) == "A"          # kept: not made again, now the newest
    memo.get_or_make("c", make("c"))                         # full: drops "b", the least recently used
    assert len(memo) == 2 and made == ["a", "b", "c"]
    memo.get_or_make("a", make("a"))
    memo.get_or_make("b", make("b"))
    assert made == ["a", "b", "c", "b"]


def test_threads_missing_one_key_at_once_make_it_once_and_a_failed_make_is_retried():
    import threading
    import time

    made: list[int] = []
    memo: LRU[str] = LRU(4)
    started = threading.Barrier(8)

    def slow() -> str:
        made.append(1)
        time.sleep(0.05)                  # the others miss the key meanwhile
        return "value"

    def worker(out: list[str]) -> None:
        started.wait()
        out.append(memo.get_or_make("k", slow))

    out: list[str] = []
    threads = [threading.Thread(target=worker, args=(out,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == ["value"] * 8 and len(made) == 1

    def fails() -> str:
        raise RuntimeError("boom")

    try:
        memo.get_or_make("bad", fails)
    except RuntimeError:
        pass
    assert memo.get_or_make("bad", lambda: "ok") == "ok"      # no maker left waiting for
