"""FACE. One Textual screen per module."""
