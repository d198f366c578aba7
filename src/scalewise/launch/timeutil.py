"""Timestamps as scalewise writes them: ISO 8601, UTC, microseconds."""

from datetime import datetime, timezone


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat()
