"""The SQLite history store: sessions as commit chains. No Textual here."""
