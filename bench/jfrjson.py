"""jfrjson.py - helpers for `jfr print --json` output, shared by the H2 and Derby benches."""
import re
from datetime import datetime, timezone


def ns(s):
    """A JFR timestamp ("2026-11-25T04:01:29.284572006Z") in ns since the epoch."""
    m = re.match(r"(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$", s)
    sec = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
    return int(sec) * 10**9 + int((m.group(2) or "0").ljust(9, "0")[:9])


def java_name(n):
    """A JVM class name as Java writes it: "[I" -> "int[]", "[Lpkg/C;" -> "pkg.C[]"."""
    dims = len(n) - len(n.lstrip("["))
    n = n[dims:]
    prim = dict(Z="boolean", B="byte", C="char", S="short", I="int", J="long", F="float", D="double")
    if dims:
        n = prim[n] if n in prim else n[1:-1]
    return n.replace("/", ".") + "[]" * dims
