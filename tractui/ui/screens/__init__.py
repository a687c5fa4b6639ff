"""Overlays: /context, /sessions, /help."""
