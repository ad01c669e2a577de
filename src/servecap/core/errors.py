"""servecap's own exceptions. Front ends map `UserInputError` to exit status 2."""


class ServecapError(Exception):
    """Base class of every error servecap raises on purpose."""


class UserInputError(ServecapError):
    """Bad input from the user (flags, files, URL, unreachable server at preflight).

    Raised before any load is sent; the CLI prints the message and exits with status 2.
    """


class DataFormatError(UserInputError):
    """A file servecap reads (CSV, JSON, TOML, JSONL) is malformed, too large or binary."""


class SSEProtocolError(ServecapError):
    """A server-sent-events stream broke the protocol (line too long, invalid framing)."""


class RunAborted(ServecapError):
    """A run stopped early (signal, disk full); what was measured is already on disk.

    `outcome` is what the run had measured (its levels, its saved status), for the front end
    to show; None where there is nothing to show."""

    def __init__(self, message: str, outcome: object = None) -> None:
        super().__init__(message)
        self.outcome = outcome
