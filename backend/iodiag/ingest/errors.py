"""Errors raised while reading a Darshan log."""


class LogReadError(Exception):
    """A log could not be read at all. The message is one line, written for a person."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")
