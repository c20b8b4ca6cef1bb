"""FACE. Widgets of the Textual workstation."""
