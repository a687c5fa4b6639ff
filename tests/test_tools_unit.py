"""The tool layer's pure parts: names providers accept, other clients' MCP configs, consent, capped results."""

from __future__ import annotations

import re

import pytest

from tractui.config.mcp import McpServer, import_mcp_servers
from tractui.core.tokens import TokenCounter
from tractui.errors import ProfileError
from tractui.tools.consent import ConsentPolicy, Decision, ToolRequest
from tractui.tools.names import ToolNames
from tractui.tools.results import capped

ALLOWED = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_tool_names_fit_every_provider_and_map_back():
    names = ToolNames()
    cases = [("demo", "add"), ("git", "git.status"), ("x", "t" * 120), ("fs", "read file"), ("fs", "read_file")]
    offered = [names.name_for(server, tool) for server, tool in cases]
    assert all(ALLOWED.match(n) for n in offered)
    assert len(set(offered)) == len(offered), "two tools never share a name"
    assert [names.pair_for(n) for n in offered] == cases
    assert names.name_for("demo", "add") == "demo__add" and names.pair_for("demo__sub") is None


def test_an_mcpservers_file_imports_with_notes_for_what_is_left_out():
    data = {
        "mcpServers": {
            "files": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                "env": {"A": "1"},
            },
            "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${T}"}},
            "old": {"type": "sse", "url": "https://example.com/sse"},
            "@org/cline one": {"command": "uvx", "args": ["mcp-server-time"], "disabled": True, "alwaysAllow": ["now"]},
            "opencode": {"type": "local", "command": ["python", "-m", "srv"], "environment": {"B": "2"}},
            "broken": 42,
        }
    }
    servers, notes = import_mcp_servers(data)
    assert set(servers) == {"files", "remote", "org-cline-one", "opencode"}
    assert servers["files"] == McpServer(
        command="npx", args=["-y", "@modelcontextprotocol/server-filesystem", "."], env={"A": "1"}
    )
    assert (
        servers["remote"].url == "https://example.com/mcp"
        and servers["remote"].headers["Authorization"] == "Bearer ${T}"
    )
    assert servers["org-cline-one"].enabled is False
    assert (servers["opencode"].command, servers["opencode"].args, servers["opencode"].env) == (
        "python",
        ["-m", "srv"],
        {"B": "2"},
    )
    assert any("old" in n and "SSE" in n for n in notes)
    assert any("alwaysAllow" in n for n in notes) and any("broken" in n for n in notes)
    with pytest.raises(ProfileError):
        import_mcp_servers({"something": {}})


def test_a_server_needs_exactly_one_transport():
    with pytest.raises(ValueError):
        McpServer()
    with pytest.raises(ValueError):
        McpServer(command="x", url="http://h/mcp")
    with pytest.raises(ValueError):
        McpServer(url="file:///etc/passwd")


def test_capped_results_keep_their_start_and_say_how_much_was_cut():
    counter = TokenCounter()
    text = " ".join(f"w{i}" for i in range(3000))
    short, cut = capped("a few words", 100, counter)
    assert (short, cut) == ("a few words", False)
    long, cut = capped(text, 200, counter)
    kept = long.split("\n[…")[0]
    assert cut and text.startswith(kept) and counter.count(kept) <= 200 < counter.count(kept + " w9999")
    assert f"of {counter.count(text):,} tokens shown" in long


def test_consent_follows_the_definition_it_was_given_for():
    saved: list[tuple[str, str, str]] = []
    policy = ConsentPolicy(remember=lambda *args: saved.append(args))
    request = ToolRequest("c1", "demo__add", "demo", "add", "{}", fingerprint="aaaa")
    assert not policy.preapproved(request)
    policy.record(request, Decision("always"))
    assert saved == [("demo", "add", "aaaa")] and policy.preapproved(request)
    changed = ToolRequest("c2", "demo__add", "demo", "add", "{}", fingerprint="bbbb")
    assert not policy.preapproved(changed), "a changed definition asks again"
    reloaded = ConsentPolicy(saved={"demo": {"add": "aaaa"}})
    assert reloaded.preapproved(request) and not reloaded.preapproved(changed)
    once = ConsentPolicy()
    once.record(request, Decision("once"))
    assert not once.preapproved(request)
