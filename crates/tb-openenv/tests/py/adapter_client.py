"""Drives `tb openenv` with the OpenEnv ThinkingBox adapter's own client (`ThinkingBoxEnv`
from meta-pytorch/OpenEnv `envs/thinkingbox_env`, importable as `thinkingbox_env`).

Usage: python adapter_client.py SPEC.json

SPEC.json (written by crates/tb-openenv/tests/it/python_client.rs):
  {"base_url": "http://127.0.0.1:PORT",
   "end_turn_tool": "InjectionAttackInToolResponse",
   "episodes": [{"test_uid": "...", "calls": [[tool, {args}], ...],
                 "closing": "... <DONE>", "expect_reward": 1.0}]}

Each episode goes through the client's whole API: reset, list_tools, the calls (the first one
single with `call_tool`, the rest as one batch with `call_tools`), state, and the closing
`submit_message`; every observation is parsed by the client's own models, and the metadata's
`execution_provenance` by the adapter's provenance model when the checkout has it. Then
episodes on the first task check `finish` (default and other reasons) and the terminal turns.
Prints one JSON line per API use (`{"api": ..., "ok": ...}`) and a last line
`{"ok": true, "episodes": N, "rewards": [...]}`; any failure raises (exit status 1).
"""

import asyncio
import json
import sys

from thinkingbox_env import SubmittedToolCall, ThinkingBoxEnv

try:
    from thinkingbox_env.models import ThinkingBoxExecutionProvenance
except ImportError:  # older adapter snapshots have no provenance model
    ThinkingBoxExecutionProvenance = None


def note(api, **kw):
    print(json.dumps({"api": api, "ok": True, **kw}), flush=True)


def check_metadata(result):
    meta = result.observation.metadata
    prov = meta.get("execution_provenance")
    assert isinstance(prov, dict), meta
    if ThinkingBoxExecutionProvenance is not None:
        ThinkingBoxExecutionProvenance.model_validate(prov)
    assert prov["thinkingbox_revision"].startswith("thinkingbox-rs"), prov
    for k in ("benchmark", "thinkingbox_revision", "data_release", "data_revision"):
        assert k in meta, (k, meta)


async def play(env, ep):
    r = await env.reset(ep["test_uid"])
    assert r.observation.kind == "reset" and not r.done, r.observation
    check_metadata(r)
    note("reset", test_uid=ep["test_uid"])
    listed = await env.list_tools()
    names = {t.name for t in listed.observation.tools}
    note("list_tools", tools=len(names))
    calls = ep["calls"]
    (tool, args), rest = calls[0], calls[1:]
    assert tool in names, tool
    o = await env.call_tool(tool, args, call_id="c0")
    assert o.observation.kind == "tool" and not o.done, o.observation
    assert o.observation.tool_error is None, o.observation
    note("call_tool", tool=tool)
    if rest:
        batch = [
            SubmittedToolCall(name=t, arguments=a, call_id=f"c{i + 1}")
            for i, (t, a) in enumerate(rest)
        ]
        o = await env.call_tools(batch)
        assert o.observation.kind == "tool_batch" and not o.done, o.observation
        assert [x.call_id for x in o.observation.tool_results] == [c.call_id for c in batch]
        assert all(x.tool_error is None for x in o.observation.tool_results), o.observation
        note("call_tools", calls=len(batch))
    st = await env.state()
    assert st.status == "active" and st.step_count == 1 + (1 if rest else 0), st
    note("state", status=st.status)
    final = await env.submit_message(ep["closing"])
    o = final.observation
    assert final.done and o.kind == "terminal" and o.finish_reason == "done", o
    assert final.reward == ep["expect_reward"], (final.reward, o)
    check_metadata(final)
    note("submit_message", reward=final.reward)
    return final.reward


async def finishes(env, uid):
    for reason in (None, "limit", "agent_error"):
        await env.reset(uid)
        r = await env.finish() if reason is None else await env.finish(reason)
        want = "harness" if reason is None else reason
        assert r.done and r.observation.finish_reason == want, r.observation
        note("finish", reason=want)


async def terminal_turns(env, uid, end_tool, normal_tool):
    end = SubmittedToolCall(name=end_tool, arguments={"reason": "r"}, call_id="e1")
    other = SubmittedToolCall(name=normal_tool, arguments={}, call_id="e2")
    for before, calls in ((False, [end, other]), (True, [end]), (False, [end])):
        await env.reset(uid)
        r = await env.submit_message(
            "Stopping here.", terminal_tool_calls=calls, tool_calls_before_content=before
        )
        o = r.observation
        assert r.done and o.finish_reason == "end_turn_tool", o
        assert not any(m.get("T") == "ToolResponse" for m in o.messages), o
        note("submit_message terminal", calls=len(calls), calls_first=before)
    await env.reset(uid)
    r = await env.submit_message("x", terminal_tool_calls=[other])
    assert not r.done and r.observation.kind == "error", r.observation
    note("submit_message terminal without an end-turn tool", error=r.observation.error)


async def run(spec):
    rewards = []
    async with ThinkingBoxEnv(spec["base_url"], message_timeout_s=120.0) as env:
        for ep in spec["episodes"]:
            rewards.append(await play(env, ep))
        first = spec["episodes"][0]
        await finishes(env, first["test_uid"])
        await terminal_turns(env, first["test_uid"], spec["end_turn_tool"], first["calls"][0][0])
    return rewards


def main():
    spec = json.load(open(sys.argv[1]))
    rewards = asyncio.run(run(spec))
    print(json.dumps({"ok": True, "episodes": len(rewards), "rewards": rewards}))


if __name__ == "__main__":
    main()
