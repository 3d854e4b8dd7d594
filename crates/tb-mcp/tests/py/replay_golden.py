"""Drive a `tb mcp-start` server with the official MCP Python SDK (package `mcp`).

Usage: replay_golden.py BASE_URL TASK_ID CALLS_JSON

1. opens a session for TASK_ID through the admin surface (POST BASE_URL/admin/sessions);
2. connects to the returned mcp_url over Streamable HTTP with `mcp.ClientSession`;
3. lists the tools, then replays the calls in CALLS_JSON (a file: [[tool, arguments], ...]);
4. probes that reserved and admin names are not tools of the session;
5. reads the effects (GET .../effects), deletes the session, and prints one JSON object on stdout:
   {"tools": [...], "results": [...], "probes": {...}, "effects": {...}}.

Exit code 0 when every step ran (the Rust test judges the content); 3 when `mcp` is missing.
"""

import asyncio
import json
import sys
import urllib.request

try:
    from mcp import ClientSession

    try:
        from mcp.client.streamable_http import streamable_http_client as _connect
    except ImportError:  # older 1.x releases
        from mcp.client.streamable_http import streamablehttp_client as _connect
except ImportError as e:
    print(f"python mcp SDK not importable: {e}", file=sys.stderr)
    sys.exit(3)


def admin(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read().decode())


def text_of(result):
    for block in result.content:
        if getattr(block, "type", None) == "text":
            return block.text
    return None


async def main(base, task, calls_path):
    with open(calls_path, encoding="utf-8") as f:
        calls = json.load(f)
    created = admin("POST", f"{base}/admin/sessions", {"task": task})
    session_id, mcp_url = created["session"], created["mcp_url"]
    out = {"session": session_id, "mcp_url": mcp_url}
    async with _connect(mcp_url) as (read, write, _get_id):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init.serverInfo.name
            listed = await session.list_tools()
            out["tools"] = [
                {"name": t.name, "description": t.description, "inputSchema": t.inputSchema}
                for t in listed.tools
            ]
            results = []
            for name, args in calls:
                r = await session.call_tool(name, args)
                results.append({"text": text_of(r), "isError": bool(r.isError)})
            out["results"] = results
            probes = {}
            for name in ["__reserved__geteffects", "__reserved__init", "__reserved__server_tool", "get_effects", "session_create"]:
                r = await session.call_tool(name, {})
                probes[name] = {"text": text_of(r), "isError": bool(r.isError)}
            out["probes"] = probes
    out["effects"] = admin("GET", f"{base}/admin/sessions/{session_id}/effects")
    out["deleted"] = admin("DELETE", f"{base}/admin/sessions/{session_id}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
