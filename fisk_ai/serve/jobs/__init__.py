"""The queued-jobs channel: Choria asyncjobs tasks taken off a work queue, run, and answered on
the task record, wire-compatible with an asyncjobs Go client (see docs/serving.md)."""
