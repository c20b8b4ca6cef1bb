"""The one error base: every failure an operator can act on is a FiskError.

A FiskError's message is a sentence naming the key, flag, path or variable to change. The command
layer prints it alone and exits 1; a traceback is printed only with --verbose.
"""


class FiskError(Exception):
    """A failure an operator can act on, described in one sentence."""
