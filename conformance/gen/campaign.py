"""One campaign over several machines: a shared hypothesis example database and shards.

- `--hypothesis-db PATH` shares hypothesis' DirectoryBasedExampleDatabase in PATH (a
  directory every machine mounts); `--hypothesis-db redis://host:port/N` shares hypothesis'
  own RedisExampleDatabase (hypothesis.extra.redis, with the `redis` extra installed). A
  failure one machine finds and shrinks is saved there, and every run that uses the
  database replays it first (hypothesis' reuse phase), whatever its profile: the database
  is added to the profile, derandomized ones (`default`, `ci`) included.
- `--shard K/N` gives each hypothesis test a seed of its own per shard, so that N machines
  draw different programs and shard K draws the same programs every time (under any
  profile when a campaign seed is given with `--hypothesis-seed`; without one, under the
  derandomized profiles only: `dev` and `nightly` draw fresh programs on every run anyway).
"""

from __future__ import annotations

import hashlib
import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

REDIS_EXTRA = "pip install 'autograd-conformance[redis]'"
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int  # 1..count
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """`K/N` with 1 <= K <= N; a ValueError that says what is expected otherwise."""
    found = _SHARD.match(text)
    if found is None:
        raise ValueError(f"--shard {text!r}: expected K/N, this machine's shard K of N "
                         "(e.g. --shard 2/4)")
    index, count = int(found[1]), int(found[2])
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"--shard {text}: K must be between 1 and N (shard K of N "
                         f"machines), e.g. --shard 1/{max(count, 2)}")
    return Shard(index, count)


def shard_seed(shard: Shard, campaign_seed: object = None) -> int:
    """The seed of shard K: a hash of K and the campaign's seed (none: a fixed one). N is left
    out, so that adding machines to a campaign keeps the shards it had drawing as before."""
    base = "" if campaign_seed is None else str(campaign_seed)
    text = f"autograd-conformance shard {shard.index}|{base}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def is_redis(spec: str) -> bool:
    return spec.startswith(("redis://", "rediss://", "unix://"))


def open_database(spec: str) -> ExampleDatabase:
    """The example database `spec` names: a redis:// URL, else a directory (created if
    missing). A ValueError naming the fix when it cannot be used."""
    if is_redis(spec):
        try:
            # hypothesis.extra.redis imports the `redis` package, an optional dependency
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError:
            raise ValueError(f"--hypothesis-db {shown(spec)}: a Redis database needs the "
                             f"`redis` package: {REDIS_EXTRA}") from None
        try:
            client = importlib.import_module("redis").Redis.from_url(spec)
        except ValueError as e:
            raise ValueError(f"--hypothesis-db {shown(spec)}: not a usable Redis URL ({e}); "
                             "e.g. redis://localhost:6379/0") from None
        return RedisExampleDatabase(client)
    path = Path(spec)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--hypothesis-db {spec}: not a directory; name a directory that "
                         "every machine of the campaign shares (created if missing), or a "
                         "redis://host:port/N URL")
    return DirectoryBasedExampleDatabase(path)


def shown(spec: str) -> str:
    """The database as run_info and messages show it: a URL without its user and password."""
    if not is_redis(spec):
        return spec
    parts = urlsplit(spec)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    # query parameters may carry a password too (redis://host?password=...)
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def describe(spec: str | None, shard: Shard | None, seed: int | None) -> dict[str, Any]:
    """run_info's campaign keys: where the example database is (no secrets), the shard."""
    database = None
    if spec is not None:
        database = {"kind": "redis" if is_redis(spec) else "directory",
                    "location": shown(spec) if is_redis(spec) else str(Path(spec).resolve())}
    return {"hypothesis_database": database, "shard": None if shard is None else str(shard),
            "shard_seed": seed}
