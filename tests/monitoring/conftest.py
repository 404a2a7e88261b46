"""The tiny monitored run (monitored.py), trained once per test session."""

import pytest
from monitored import monitored_run_in, start_monitored_run


@pytest.fixture(scope="session")
def monitored_run(made_once):
    return monitored_run_in(made_once("monitored", start_monitored_run))
