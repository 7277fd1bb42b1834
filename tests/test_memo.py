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
