"""A checker of Slurm topology.conf files (topology/tree plugin), after
topology.conf(5): one switch per line as KEY=VALUE words (keys case
insensitive: SwitchName, Switches, Nodes, LinkSpeed), `#` to the end of the
line is a comment, children given as hostlist expressions; every node under
at least one switch; and, for TopologyParam=RouteTree, one fully connected
tree."""

from __future__ import annotations

from rankwise.cluster.hostlist import expand

KEYS = {"switchname", "switches", "nodes", "linkspeed"}


def check_topology_conf(text: str) -> dict[str, dict[str, list[str]]]:
    """{switch: {"nodes": [...], "switches": [...]}}; AssertionError naming the line otherwise."""
    switches: dict[str, dict[str, list[str]]] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        assert len(raw) <= 1024, f"line {no}: longer than 1024 characters (older Slurm's limit)"
        words = [w.split("=", 1) for w in line.split()]
        assert all(len(w) == 2 and w[1] for w in words), f"line {no}: not KEY=VALUE words: {line}"
        keys = [k.lower() for k, _ in words]
        assert set(keys) <= KEYS, f"line {no}: unknown key in {keys}"
        assert keys[0] == "switchname" and len(set(keys)) == len(keys), f"line {no}: SwitchName first, once"
        values = {k.lower(): v for k, v in words}
        assert ("nodes" in values) != ("switches" in values), f"line {no}: a switch has Nodes or Switches"
        if "linkspeed" in values:
            assert values["linkspeed"].isdigit(), f"line {no}: LinkSpeed is a number"
        name = values["switchname"]
        assert name not in switches, f"line {no}: switch {name} defined twice"
        switches[name] = {"nodes": expand(values.get("nodes", "")) if "nodes" in values else [],
                          "switches": expand(values["switches"]) if "switches" in values else []}
    children = [c for s in switches.values() for c in s["switches"]]
    assert set(children) <= set(switches), f"undefined switches {set(children) - set(switches)}"
    assert len(children) == len(set(children)), "a switch under two parents"
    roots = [s for s in switches if s not in children]
    assert len(roots) == 1, f"not one fully connected tree: roots {roots}"
    return switches


def nodes_under(switches, name: str) -> list[str]:
    s = switches[name]
    return s["nodes"] + [n for child in s["switches"] for n in nodes_under(switches, child)]
