"""HOST. a2a v1 messages, validation, client, serving engine and transports."""
