"""FACE. The --no-tui surface: the answer on stdout, everything else on stderr."""
