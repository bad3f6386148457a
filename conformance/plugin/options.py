"""The plugin's options: those it shares with `autograd-conformance run`
(conformance/shared_options.py) and its own, and the options of a run as its report records them."""

from __future__ import annotations

import fnmatch
import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

from conformance import shared_options
from conformance.case.vocabulary import parse_devices


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("autograd-conformance")
    shared_options.add_to_pytest(group)  # those `run` shares (conformance/shared_options.py)
    group.addoption("--conformance-report", default=None, metavar="DIR",
                    help="write conformance.json and summary.md for this run into DIR")
    group.addoption("--generated-programs", action="store_true",
                    help="also run the generated-program suite (conformance/"
                         "generated_suite.py), wherever the package is installed")
    group.addoption("--opinfo", action="store_const", const=True, default=None,
                    help="also run the OpInfo items: every covered entry of PyTorch's OpInfo "
                         "x float32, float64 (conformance/opinfo/; default: the ini option "
                         "conformance_opinfo, in a run naming no paths)")
    group.addoption("--no-opinfo", action="store_const", const=False, dest="opinfo",
                    help="no OpInfo items, whatever conformance_opinfo says")
    parser.addini("conformance_opinfo", type="bool", default=False,
                  help="run the OpInfo items in a run naming no paths (as if --opinfo)")
    group.addoption("--opinfo-samples", type=int, default=None, metavar="N",
                    help="each OpInfo item checks at most N of OpInfo's samples, drawn seeded "
                         "by the item's id, besides its error inputs and the parts the map's "
                         "left-out lines name (0: every sample; default: the ini option "
                         "conformance_opinfo_samples, else 0)")
    parser.addini("conformance_opinfo_samples", default="0",
                  help="as --opinfo-samples (0: every sample)")
    if importlib.util.find_spec("pytest_timeout") is None:
        # this project's pyproject.toml sets pytest-timeout's backstop (a dev dependency):
        # known here, so that a run without it installed does not warn of an unknown option
        parser.addini("timeout", "pytest-timeout's limit per test (not installed: unused)")
    parser.addini("conformance_cases", type="paths", default=[],
                  help="where YAML case files are collected from (relative to the ini "
                       "file); YAML under paths named on the command line is collected too")


def opinfo_samples(config: pytest.Config) -> int:
    """--opinfo-samples, else the ini option conformance_opinfo_samples (0: every sample)."""
    given = config.getoption("--opinfo-samples")
    value = given if given is not None else config.getini("conformance_opinfo_samples")
    try:
        samples = int(value)
    except ValueError:
        raise pytest.UsageError(f"conformance_opinfo_samples: {value!r} is not a number of "
                                "samples (0: every sample)") from None
    if samples < 0:
        raise pytest.UsageError(f"--opinfo-samples {samples}: a number of samples, 0 or more "
                                "(0: every sample)")
    return samples


def named(config: pytest.Config) -> list[Path]:
    """The paths named on the command line (not testpaths: naming a folder there is no
    request for its YAML)."""
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        return []
    return [config.invocation_params.dir / arg.split("::")[0] for arg in config.args]


def is_conformance_run(config: pytest.Config) -> bool:
    """Whether this run may collect conformance items or asked for a conformance option: the
    plugin is loaded in every pytest run of the environment, and only these load the harness
    (and through it hypothesis' profiles, the engine under test, torch). A run is one when
    its ini names case paths or turns the OpInfo items on, when it gives any of the plugin's
    options, or when a path it names is a YAML file, a directory holding one, or a file of
    this package (its generated-program suite)."""
    if config.getini("conformance_cases") or config.getini("conformance_opinfo"):
        return True
    for option in shared_options.OPTIONS:
        value = config.getoption(option.dest)
        if (bool(value) if option.flag else value != option.default):
            return True
    if config.getoption("--conformance-report") is not None or \
            config.getoption("--generated-programs") or config.getoption("opinfo") is not None:
        return True
    package = Path(shared_options.__file__).resolve().parent
    skipped = [str(p) for p in config.getini("norecursedirs")]
    return any(path.suffix == ".yaml" or package in path.resolve().parents
               or (path.is_dir() and _holds_yaml(path, skipped)) for path in named(config))


def _holds_yaml(directory: Path, skipped: list[str]) -> bool:
    """A YAML file anywhere under `directory`, in the folders pytest collects from."""
    for _, folders, files in os.walk(directory):
        if any(f.endswith(".yaml") for f in files):
            return True
        folders[:] = [f for f in folders
                      if not any(fnmatch.fnmatch(f, pattern) for pattern in skipped)]
    return False


def devices_option(config: pytest.Config) -> tuple[str, ...] | None:
    value = config.getoption("--devices")
    return None if value is None else parse_devices(str(value))


def run_options(config: pytest.Config) -> dict[str, Any]:
    """The command-line options that shape which items ran and their verdicts (engine,
    hypothesis profile and seed, and the expectations file have their own run_info keys)."""
    devices = devices_option(config)
    return {
        "keyword": config.getoption("keyword", "") or None,
        "markexpr": config.getoption("markexpr", "") or None,
        "lenient_messages": bool(config.getoption("--lenient-messages")),
        "strict_expectations": bool(config.getoption("--strict-expectations")),
        "devices": None if devices is None else list(devices),
        "maxfail": int(config.getoption("maxfail", 0) or 0),
        "opinfo_samples": opinfo_samples(config),
    }
