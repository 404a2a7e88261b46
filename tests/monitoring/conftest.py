"""The tiny monitored run (monitored.py), trained once per session."""

import pytest
from monitored import start_monitored_run


@pytest.fixture(scope="session")
def monitored_run(tmp_path_factory):
    return start_monitored_run(tmp_path_factory.mktemp("monitored"))
