"""The LLM hot path takes no process-wide lock (issue 40): compiled templates are read without one,
and a request's deadline is its own socket timeout, not an entry in one shared watchdog."""
from __future__ import annotations

import threading
import types
from pathlib import Path

import jinja2
import pytest

from mcbuild.llm.templates import template_environment
from mcbuild.runtime.agents.llm import rendering


def test_templates_and_their_includes_are_read_without_the_lru_cache(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "outer.j2").write_text("<{% include 'inner.j2' %}>")
    (tmp_path / "inner.j2").write_text("{{ x }}")
    env = template_environment(tmp_path, keep_trailing_newline=False)
    first = env.get_template("outer.j2")
    assert first.render(x=0) == "<0>"                    # compiles both (jinja2's lexer keeps an LRUCache)

    def locked(*args: object) -> None:
        raise AssertionError("jinja2's LRUCache (and its mutex) was used")

    monkeypatch.setattr(jinja2.utils.LRUCache, "__getitem__", locked)
    monkeypatch.setattr(jinja2.utils.LRUCache, "get", locked)
    assert env.get_template("outer.j2") is first
    assert first.render(x=1) == "<1>"
    (tmp_path / "inner.j2").write_text("changed")       # package files: compiled once per process
    assert env.get_template("outer.j2").render(x=2) == "<2>"


def test_the_agents_prompts_render_alike_on_many_threads() -> None:
    want = rendering.render("recent_steps.j2", steps=[])
    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(rendering.render("recent_steps.j2", steps=[])))
               for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [want] * 32


def _locks_in(module: types.ModuleType) -> list[str]:
    """Lock-like objects among ``module``'s globals and their attributes (other modules left out)."""
    kinds = (type(threading.Lock()), type(threading.RLock()), threading.Condition, threading.Semaphore)
    found = []
    for name, value in vars(module).items():
        if isinstance(value, (types.ModuleType, type)):
            continue
        inner = vars(value).items() if hasattr(value, "__dict__") else ()
        found += [f"{name}.{k}" for k, v in inner if isinstance(v, kinds)] + [name] * isinstance(value, kinds)
    return found


def test_the_request_path_shares_no_lock_and_a_deadline_still_bounds_a_dripping_reply() -> None:
    import time

    from mcbuild.llm import wire
    from mcbuild.llm.testing import ScriptedEndpoint

    assert _locks_in(wire) == [], "a process-wide lock on the request path"
    with ScriptedEndpoint(lambda messages: '{"ok": 1}', drip=0.05) as ep:     # about 14 s for the whole reply
        target = wire.endpoint(ep.base_url, "k", 0.4, 65536)
        start = time.monotonic()
        with pytest.raises(wire.WireTimeout):
            wire.post_json(target, "/chat/completions", {"model": "m", "messages": []})
        assert time.monotonic() - start < 3.0
