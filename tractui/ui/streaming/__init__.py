"""A reply on screen as it arrives: the renderer, the frame loop and its pacing."""
