"""FACE. One module per command: flag parsing and wiring only."""
