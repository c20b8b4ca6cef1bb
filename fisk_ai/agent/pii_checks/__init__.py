"""The PII guard's checks: what each one matches, and the validators that keep look-alikes out.

The guard itself is ``fisk_ai.agent.pii``; ``docs/pii.md`` describes each check.
"""
