"""LEAF. Vendor-neutral conversation types and the provider registry."""
