"""The raw Redis calls pack commands with hiredis directly: the same bytes redis-py sends,
redis-py's own packer for what hiredis does not take."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from crawler.frontier.redis.redis_conn import _packed

COMMANDS: list[list[tuple[Any, ...]]] = [
    [("HGET", "c1:dg:abc", b"\x00\xff key")],
    [
        ("EVALSHA", "a" * 40, 2, "{c1:f3}q", "{c1:f3}n", 0, -7, 1.5, 1e-05, 2**63 - 1),
        ("SET", "c1:sf:dns:h\u00e9.example", '{"ip":"1.2.3.4"}', "EX", 86400),
        ("GET", ""),
    ],
    [("SCRIPT LOAD", "return 1")],  # redis-py splits a command name with a space
    [("SET", "k", memoryview(b"value"))],
]


def _bytes(packed: list[bytes]) -> bytes:
    assert isinstance(packed, list)  # chunks, as send_packed_command takes them
    return b"".join(packed)


@pytest.mark.parametrize("commands", COMMANDS)
def test_the_bytes_are_redis_py_s(commands: list[tuple[Any, ...]]) -> None:
    connection = redis.Connection()
    assert _bytes(_packed(connection, commands)) == b"".join(connection.pack_commands(commands))


def test_a_command_name_with_a_space_is_two_arguments() -> None:
    packed = _bytes(_packed(redis.Connection(), [("SCRIPT LOAD", "return 1")]))
    assert packed == b"*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n$8\r\nreturn 1\r\n"
