"""Errors raised by the mining engine.

Every message is one line meant for a person (CLI, admin page, task log), never a
traceback: the callers print ``str(exc)``.
"""


class MiningError(Exception):
    """A bad input or an impossible request: the message says which and why."""


class DatasetRefused(MiningError):
    """An ``hf:`` dataset name that is neither a Hub dataset nor a local folder (a file
    loader of the datasets library, an unknown bare name); ``code`` is stable, for the
    API's field error."""

    code = "hf_dataset_refused"


class MiningStopped(Exception):
    """``should_stop`` asked a shard to stop; its checkpoint (if any) was saved."""

    def __init__(self, message: str, checkpoint_path: str | None = None) -> None:
        super().__init__(message)
        self.checkpoint_path = checkpoint_path
