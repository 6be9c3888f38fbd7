"""Shared by the verify tests: one replay server per test session (it imports torch once;
every replay is still its own forked process)."""
from __future__ import annotations

import pytest

from torchmemlint.verify.runner import ReplayServer


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: replays scripts in child processes (seconds each; still run in CI)")


@pytest.fixture(scope="session")
def replay_server():
    with ReplayServer() as server:
        yield server
