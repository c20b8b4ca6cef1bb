"""The floor of the leaf layer: ids, durations, terminal text sanitising, redaction, file-system helpers.

Imports nothing else from fisk_ai except fisk_ai.errors; every other package may import it."""
