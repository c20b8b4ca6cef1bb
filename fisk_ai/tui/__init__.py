"""FACE. The Textual workstation: FiskApp and the a2a bridge."""
