"""HOST. The embedded nats-server child process and NATS context files."""
