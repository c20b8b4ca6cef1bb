"""Fakes the tests share.

- ``fiskapp``: a fake fisk application (an executable script answering --fisk-introspect).
- ``messages_api``: a local fake of the Anthropic Messages API, driven by the real SDK.
- ``provider``: a scripted neutral provider recording every request.
- ``prompter``: a scripted operator answering questions in order.
- ``events``: a sink recording every event a run emits.
"""
