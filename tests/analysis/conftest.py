"""Profiles built from literal rows, so every expected answer can be worked out by hand."""

from __future__ import annotations

import pytest

from support.profiles import build_profile


@pytest.fixture
def make_profile():
    return build_profile
