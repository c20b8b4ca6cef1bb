"""CORE. The agent loop, runner, confirm gate, hooks and budgets."""
