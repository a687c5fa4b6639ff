"""tractui: a terminal chat client for reasoning models."""

__version__ = "0.1.0"
