"""CORE. Session journal records, the pure fold, fingerprints and the session stores."""
