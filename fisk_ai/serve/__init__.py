"""HOST. Serving an agent: the Server with its channels and slot pools, the engines answering
a2a (``prompts/`` and ``tools``, over one reply set), and hosting a terminal's own agent. The
protocol they speak is ``fisk_ai.a2a``, which never imports this package."""
