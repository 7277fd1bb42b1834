"""Shared fixtures: compiled suites are built once per test session (in memory)."""
from __future__ import annotations

import os

import pytest

SUITES = ("m01", "m02", "m03", "m04", "m05", "m06")

# The tests' Ray cluster (``ray_cluster``): bound to 127.0.0.1 rather than a routable address (read when ray
# is first imported), no auth token (loopback only; the default token file in ~/.ray is shared by every
# cluster of the user), and workers at normal priority (Ray's default niceness 15 starves them on a busy
# shared machine).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_worker_niceness", "0")


def pytest_sessionstart(session):
    """The game's data must be imported and whole: otherwise the run stops at once with the one line
    that says how to import it (no test is skipped for it)."""
    from mcbuild.compiler.core.errors import CompileError, SpecError
    from mcbuild.compiler.core.vanilla import ensure

    try:
        ensure()
    except (SpecError, CompileError) as exc:
        pytest.exit(f"error: {exc}", returncode=2)


def pytest_collection_modifyitems(config, items):
    opt_in = {"slow": ("MCBUILD_SLOW", "slow check"), "cluster": ("MCBUILD_CLUSTER", "multi-node Ray cluster (make test-cluster)"),
              "soak": ("MCBUILD_SOAK", "the chaos soak (make test-soak)")}
    for marker, (env, what) in opt_in.items():
        if os.environ.get(env) == "1":
            continue
        skip = pytest.mark.skip(reason=f"{what}: set {env}=1 to run")
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def suites():
    from mcbuild.pipeline.build import compile_path
    from mcbuild.compiler.core.paths import SPECS

    return {sid: compile_path(SPECS / f"{sid}.yaml") for sid in SUITES}


def _built_worlds(root):
    from mcbuild.compiler.spec.worlds import load_worlds

    mirrors = load_worlds().mirrors
    return sorted(p.parent.parent.name for p in (root / "worlds").glob("*/vanilla/level.dat")
                  if all((p.parent.parent / m / "level.dat").is_file() for m in mirrors))


def _current(build, suites) -> bool:
    """Whether ``build`` holds every suite exactly as the current sources compile it and saves
    that verify against the current world-builder sources and specs."""
    from mcbuild.pipeline.build import differences
    from mcbuild.compiler.worlds.integrity import verify_worlds

    if not _built_worlds(build) or any(differences(art, build) for art in suites.values()):
        return False
    problems, _ = verify_worlds(build)
    return not problems


@pytest.fixture(scope="session")
def world_build(tmp_path_factory, suites):
    """A build folder with compiled packs and built worlds: ``build/`` when it matches the current
    sources (packs byte-equal to a fresh compile, saves verified), otherwise the packs compiled in
    memory and plains-1 built into a temporary folder (a few seconds)."""
    from mcbuild.compiler.core.paths import BUILD
    from mcbuild.compiler.spec.worlds import WORLDS_FILE
    from mcbuild.pipeline.worlds import build_worlds

    if _current(BUILD, suites):
        return BUILD
    root = tmp_path_factory.mktemp("build")
    for sid, artifact in suites.items():
        (root / sid).mkdir()
        for name, data in artifact.files.items():
            (root / sid / name).write_bytes(data)
    build_worlds(WORLDS_FILE, root, only="plains-1", jobs=1)
    return root


@pytest.fixture(scope="session")
def built_world_ids(world_build):
    return _built_worlds(world_build)


@pytest.fixture(scope="session")
def ray_cluster():
    """One new local Ray instance for the session (2 CPUs, 2 ``mc_server`` slots, no dashboard, bound to
    127.0.0.1; ``address="local"``: never a cluster that ``RAY_ADDRESS`` or a stale ``ray_current_cluster``
    file names); its workers import this checkout and the test modules. Yields its address."""
    from mcbuild.compiler.core.paths import ROOT

    tests = os.path.dirname(os.path.abspath(__file__))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), tests, os.environ.get("PYTHONPATH")]))
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, resources={"mc_server": 2}, include_dashboard=False, log_to_driver=False,
             logging_level="warning")
    try:
        address = ray.get_runtime_context().gcs_address
        assert address.startswith("127.0.0.1:"), address
        yield address
    finally:
        ray.shutdown()


#: The small real study of the analysis tests: the two scripted planners in plains-1 under every condition.
PLANNER_STUDY = {"worlds": ["plains-1"], "conditions": ["vanilla", *SUITES], "tasks": ["iron_armor"],
                 "models": ["none"], "repetitions": 1, "base_seed": 0, "workers": 1}


@pytest.fixture(scope="session")
def planner_studies(world_build, tmp_path_factory):
    """Two stores of that study, run on the simulator: ``planners`` (both planners, 14 episodes) and
    ``adaptive-planner`` (the adaptive planner's 7 again, in a study of its own)."""
    from mcbuild.runtime.study.design.config import StudyConfig
    from mcbuild.runtime.study.run.runner import run_study

    root = tmp_path_factory.mktemp("planner-studies")
    studies = {"planners": ["vanilla-planner", "adaptive-planner"], "adaptive-planner": ["adaptive-planner"]}
    for name, configurations in studies.items():
        cfg = StudyConfig.model_validate({**PLANNER_STUDY, "name": name, "configurations": configurations})
        assert run_study(cfg, out_dir=root / name, build_root=world_build).complete
    return {name: root / name for name in studies}
