"""HOST. The Slack channel of `fisk serve`: a bot in Slack threads over socket mode."""
