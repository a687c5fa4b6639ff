"""A config.toml and a profile as someone writes them by hand: comments at the top, after values
and above tables, blank lines, keys at their defaults, spellings of their own, keys and tables
tractui does not read. Writing either must change the values that change and not a byte more."""

from __future__ import annotations

CONFIG = """\
# tractui, as I like it
default_profile = "demo"  # the offline one

theme = "tractui-dark"   # easy on the eyes at night

# the servers I use
[mcp.servers.demo]
command = "python3"  # the shipped demo server
args = ["-m", "tractui.tools.demo_server"]
enabled = true       # said, though it is the default

[mcp.servers.demo.tools]
exclude = ["divide"]

[future]   # a table a newer tractui reads
flag = true
"""

PROFILE = """\
# my work profile, written by hand
provider = "demo"
model = "demo"  # the offline model
description = "work"
owner = "me"          # not a key tractui reads

[settings]  # only what differs
context-limit = "32k"    # as the vendor writes it
temperature = 0.7        # warm
reasoning.effort = "high"   # thinks hard
Max-Tokens = 4096        # any case

[notes]   # my own table
why = "kept"
"""
