"""Wire protocols: neutral history in, stream events out. No Textual here."""
