"""The app's widgets, one small widget per module."""
