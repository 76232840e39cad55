"""The state file of an emulated cluster: DIR/state.json, what `up` made and `down` removes.

Written atomically, and before anything is created: the whole plan first with "complete"
false, so that a crash at any point leaves a file naming everything that may exist, and
`down` removes exactly that (whatever of it exists; nothing else). The explicit lists of
namespaces, links, bridges and qdiscs are for people and `status`; the plan is what is read."""

from __future__ import annotations

import json
import time
from os import PathLike
from pathlib import Path

from rankwise.emulate.plan import Plan
from rankwise.util.errors import RankwiseError, file_error
from rankwise.util.files import write_atomic

FORMAT = "rankwise-emulated-cluster/1"
FILE = "state.json"


def state_path(cluster_dir: str | PathLike) -> Path:
    return Path(cluster_dir) / FILE


def write_state(cluster_dir: str | PathLike, plan: Plan, complete: bool) -> None:
    ends = [e for link in plan.links for e in (link.lower, link.upper)]
    doc = {
        "format": FORMAT,
        "complete": complete,
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "namespaces": plan.namespaces,
        "bridges": [{"ns": plan.fabric, "dev": b} for b in plan.bridges],
        "links": [{"name": link.name, "ends": [vars(link.lower), vars(link.upper)], "rate_bit": link.rate_bit}
                  for link in plan.links],
        "qdiscs": [{"ns": e.ns, "dev": e.dev, "kind": "htb", "handle": "1:"} for e in ends],
        "slurm_daemons": plan.slurm.get("daemons", []),  # started in the namespaces above: down ends them
        "plan": plan.to_dict(),
    }
    write_atomic(state_path(cluster_dir), json.dumps(doc, indent=1) + "\n")


def read_state(cluster_dir: str | PathLike) -> tuple[Plan, bool] | None:
    """(plan, complete), or None when DIR holds no state file (nothing made, or removed)."""
    path = state_path(cluster_dir)
    if Path(cluster_dir).exists() and not Path(cluster_dir).is_dir():
        raise RankwiseError(f"{cluster_dir}: not a directory; give the folder `rankwise emulate up -o` wrote")
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise file_error(path, None, f"cannot read the cluster's state: {e.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise file_error(path, e.lineno, f"invalid JSON: {e.msg}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise file_error(path, None, f"not a {FORMAT} file")
    try:
        return Plan.from_dict(doc["plan"]), bool(doc["complete"])
    except (KeyError, TypeError, ValueError) as e:
        raise file_error(path, None, f"malformed state: {e}") from None


def remove_state(cluster_dir: str | PathLike) -> None:
    state_path(cluster_dir).unlink(missing_ok=True)
