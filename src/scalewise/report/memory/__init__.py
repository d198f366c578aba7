"""The connection-memory report: the B10 figure, its page and its terminal table."""
