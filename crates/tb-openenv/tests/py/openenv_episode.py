"""Drives `tb openenv` with the PyPI OpenEnv client (`openenv` >= 0.4.1, GenericEnvClient).

Usage: python openenv_episode.py SPEC.json

SPEC.json (written by crates/tb-openenv/tests/it/python_client.rs):
  {"base_url": "http://127.0.0.1:PORT",
   "episodes": [{"test_uid": "...", "calls": [[tool, {args}], ...],
                 "closing": "... <DONE>", "expect_reward": 1.0, "expect_reward_type": "pass"}],
   "forbidden_keys": ["user_context", ...],      # no key of these names at any depth
   "forbidden_strings": ["sk-...", "/abs/path"]}  # no frame text contains these

Every episode: reset to the task, list the tools, call the given tools in order, submit the
closing message, and check the terminal observation's reward. Every raw frame the server sent
(observations, states, and an error frame provoked on purpose) is scanned for hidden fields.
Prints one JSON line `{"ok": true, ...}` at the end; any failure raises (exit status 1).
"""

import json
import sys
from importlib.metadata import version

from openenv.core import GenericEnvClient


def version_tuple(v):
    out = []
    for part in v.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out)


class RecordingClient(GenericEnvClient):
    """The stock generic client, keeping every frame the server sends (as parsed by the
    client's own `_receive`)."""

    frames = []

    async def _receive(self):
        frame = await super()._receive()
        RecordingClient.frames.append(frame)
        return frame


def scan(value, forbidden_keys, path="$"):
    """Yields (path, key) for every forbidden key at any depth."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k.lower() in forbidden_keys:
                yield (path, k)
            yield from scan(v, forbidden_keys, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from scan(v, forbidden_keys, f"{path}[{i}]")


def run_episode(base_url, ep):
    with RecordingClient(base_url=base_url, message_timeout_s=120.0).sync() as env:
        result = env.reset(test_uid=ep["test_uid"])
        obs = result.observation
        assert not result.done, f"reset ended the episode: {obs}"
        assert obs["kind"] == "reset", obs
        assert obs["task_uid"] == ep["test_uid"], obs
        assert obs["steps_taken"] == 0, obs

        listed = env.step({"type": "list_tools"})
        assert listed.observation["kind"] == "tools", listed.observation
        names = {t["name"] for t in listed.observation["tools"]}
        for t in listed.observation["tools"]:
            assert set(t) == {"name", "description", "input_schema"}, t

        for i, (tool, args) in enumerate(ep["calls"]):
            assert tool in names, f"golden tool {tool} is not listed"
            step = env.step(
                {"type": "call_tool", "tool_name": tool, "arguments": args, "call_id": f"c{i}"}
            )
            o = step.observation
            assert not step.done, f"episode ended early after {tool}: {o}"
            assert o["kind"] == "tool" and o["tool_name"] == tool and o["call_id"] == f"c{i}", o
            assert o.get("tool_error") not in ("tool_not_found", "invalid_args"), o

        # A malformed action is an error frame; the session lives on.
        try:
            env.step({"type": "call_tool", "tool_name": "x", "arguments": "not an object"})
            raise AssertionError("a malformed action was accepted")
        except RuntimeError as e:
            assert "VALIDATION_ERROR" in str(e), e

        state = env.state()
        assert state["status"] == "active" and state["step_count"] == len(ep["calls"]), state

        final = env.step({"type": "submit_message", "content": ep["closing"]})
        o = final.observation
        assert final.done, o
        assert o["kind"] == "terminal", o
        assert o["finish_reason"] == "done", o
        assert final.reward == ep["expect_reward"], (final.reward, o)
        assert o["reward_type"] == ep["expect_reward_type"], o
        assert o["system_error"] is False, o
        assert o["test_summary"]["graded"] is True, o
        assert o["steps_taken"] == len(ep["calls"]) + 1, o

        # Further steps repeat the terminal observation.
        again = env.step({"type": "list_tools"})
        assert again.observation == o and again.reward == final.reward, again
        state = env.state()
        assert state["status"] == "done", state
        return final.reward


def main():
    spec = json.load(open(sys.argv[1]))
    v = version("openenv")
    assert version_tuple(v) >= (0, 4, 1), f"openenv {v} is older than 0.4.1"
    rewards = [run_episode(spec["base_url"], ep) for ep in spec["episodes"]]

    forbidden_keys = {k.lower() for k in spec["forbidden_keys"]}
    kinds = set()
    for frame in RecordingClient.frames:
        raw = json.dumps(frame, ensure_ascii=False)
        kinds.add(frame["type"])
        hits = list(scan(frame, forbidden_keys))
        assert not hits, f"hidden keys in a frame: {hits}"
        for s in spec["forbidden_strings"]:
            assert s not in raw, f"hidden text {s[:40]!r} in a {frame['type']} frame"
    assert kinds == {"observation", "state", "error"}, kinds
    print(json.dumps({"ok": True, "openenv": v, "rewards": rewards, "frames": len(RecordingClient.frames)}))


if __name__ == "__main__":
    main()
