"""Fakes the tests share: a fake fisk application (``tests.fakes.fiskapp``)."""
