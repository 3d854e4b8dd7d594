#!/usr/bin/env python3
"""Writes crates/tb-domains/surface/<server>.json from the reference's recorded tool lists
(tb-bench-v1/tools/<server>.json): per tool, in the server's registration order, its name
and its input schema after the framework client's transform ($refs inlined, $defs, the
top-level title and each top-level property's title dropped), with every description TEXT
left out (an empty string marks where the reference has one; tb fills in our own words).
Only facts are kept: key order, types, enums, examples, titles (class names), constraints,
defaults, required lists.

usage: scripts/gen_surface_shapes.py [TB_BENCH_V1_DIR]   (default ../shared/tb-bench-v1)
"""
import copy, json, os, sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../shared/tb-bench-v1")
out_dir = os.path.join(os.path.dirname(__file__), "../crates/tb-domains/surface")
SERVERS = ["sandbox_external_retail", "external_booking_v1", "sandbox_auto_insurance",
           "sandbox_neobank_support_v1", "sandbox_consulting"]


def deref(root):
    def resolve(ptr):
        node = root
        for p in ptr[2:].split("/"):
            node = node[p.replace("~1", "/").replace("~0", "~")]
        return node

    def walk(node, visiting):
        if isinstance(node, dict):
            if "$ref" in node:
                ref = node["$ref"]
                assert ref not in visiting, ref
                return walk(copy.deepcopy(resolve(ref)), visiting | {ref})
            return {k: walk(v, visiting) for k, v in node.items() if k != "$ref"}
        if isinstance(node, list):
            return [walk(x, visiting) for x in node]
        return node
    return walk(root, frozenset())


def blank(schema):
    """Empties every `description` keyword (not properties named `description`)."""
    if not isinstance(schema, dict):
        return
    for k, v in schema.items():
        if k == "description" and isinstance(v, str):
            schema[k] = ""
        elif k in ("properties", "$defs"):
            for sub in v.values():
                blank(sub)
        elif k in ("items", "additionalProperties", "not"):
            blank(v)
        elif k in ("anyOf", "oneOf", "allOf", "prefixItems"):
            for sub in v:
                blank(sub)


os.makedirs(out_dir, exist_ok=True)
for server in SERVERS:
    d = json.load(open(os.path.join(src, "tools", server + ".json")))
    tools = []
    for t in d["tools"]:
        s = deref(t["input_schema"])
        s.pop("$defs", None)
        s.pop("title", None)
        for p in (s.get("properties") or {}).values():
            p.pop("title", None)
        blank(s)
        tools.append({"name": t["name"], "inputSchema": s})
    with open(os.path.join(out_dir, server + ".json"), "w") as f:
        json.dump(tools, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(server, len(tools))
