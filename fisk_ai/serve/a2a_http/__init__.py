"""Google's A2A 1.0 over HTTP: a door into the agent's prompts channel, built on the a2a-sdk's
server parts. The SDK is imported only when `fisk serve` starts the endpoint, so nothing else
pays for it; this package's modules import it at the top, and only ``hosting`` is reached from
the worker, lazily."""
