"""The floor beneath the leaves: durations, terminal text hygiene, redaction, file helpers.

Imports nothing from fisk_ai but fisk_ai.errors; every other package may import it."""
