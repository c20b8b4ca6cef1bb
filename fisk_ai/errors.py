"""The one error base: every failure an operator can act on is a FiskError.

A FiskError's message is a sentence naming the key, flag, path or variable to change. The command
layer prints it alone and exits 1; a traceback is printed only with --verbose.
"""


class FiskError(Exception):
    """A failure an operator can act on, described in one sentence."""


class BoundedInputError(FiskError, ValueError):
    """Data from outside (a file, a record, a model's arguments) passes a cap a reader sets: its
    size, its nesting, its alias expansion or the range of a number in it.

    ``what`` names the data as a noun phrase ("the session index /s/.index.json") and ``problem``
    completes the sentence ("nests deeper than 100 levels"); the message is the two joined.
    """

    def __init__(self, what: str, problem: str) -> None:
        super().__init__(f"{what} {problem}")
        self.what = what
        self.problem = problem
