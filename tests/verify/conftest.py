def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: replays scripts in child processes (seconds each; still run in CI)")
