"""The Dask tests' cluster: one small LocalCluster (2 worker processes, 1 thread each) per test module."""

from __future__ import annotations

import logging

import pytest

import distributed  # a test dependency: the README's test command installs it


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as c:
        yield c
