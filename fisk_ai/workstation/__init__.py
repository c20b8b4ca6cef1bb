"""The workstation: the Textual apps, and hosting a run behind the full screen."""
