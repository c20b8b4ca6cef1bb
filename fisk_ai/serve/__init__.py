"""HOST. The Server, its channels and slot pools."""
