# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The channel of the cross-rank argument check: fixed-size descriptors over direct TCP connections between ranks.

Every collective of a checked ``cncl`` group exchanges one small descriptor per rank (see ``_checks``) before the
Gloo transport sees the data. Run as a c10d Gloo operation, that exchange costs two thread hand-offs per collective
(the Gloo worker thread and back) and, on a busy host, as much as the data transfer of a 1 MB all-reduce; here it
is a plain ``send`` to every peer and a blocking ``recv`` from every peer on the calling thread: one network round
trip, no thread hop.

Set-up (once per group, through the group's c10d store, as Gloo does for its own connections): every rank listens
on an ephemeral TCP port, publishes ``host:port`` under ``cncl_check/<rank>``, connects to every lower rank and
accepts every higher one (a full mesh, like Gloo's pairs). The host is the local address of the route to
``MASTER_ADDR`` (set by ``torchrun`` and the env:// init method), else the address of the host name, else
127.0.0.1; ``CATCH_CNCL_CHECK_ADDR`` overrides it.

Order: :meth:`DescriptorExchange.post` runs in call order (the engine posts when it starts a job, in issue order) and
hands out a ticket; :meth:`DescriptorExchange.collect` receives in ticket order, so the n-th message on every
connection belongs to the n-th collective (TCP keeps the order). Errors: a peer that exits closes its connection
(reported at once); one that stops answering is reported after the process group timeout (socket timeout).
"""

from __future__ import annotations

import os
import socket
import struct
import threading
from collections.abc import Sequence
from datetime import timedelta

import torch.distributed as dist

_HELLO = struct.Struct("<8sq")
_MAGIC = b"cnclchk1"


class ExchangeError(ConnectionError):
    """The channel failed (peer closed, timed out, broken by an earlier failure); the message names the peer."""


def local_address() -> str:
    """The address peers use to reach this process (see the module docstring for the order of choices)."""
    override = os.environ.get("CATCH_CNCL_CHECK_ADDR")
    if override:
        return override
    master = os.environ.get("MASTER_ADDR")
    if master:
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect((master, 9))  # UDP connect: picks the route, sends nothing
                return str(probe.getsockname()[0])
        except OSError:
            pass
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


class DescriptorExchange:
    """Full mesh of TCP connections of one group, exchanging ``length`` int64 values per rank and collective.

    Args:
        store: the group's c10d store (keys ``cncl_check/<rank>`` are written and read).
        rank, size: this rank and the group size.
        length: number of int64 values in every descriptor (the same on every rank).
        timeout: the process group timeout: set-up and every receive fail after it.

    Raises:
        ExchangeError: when a peer cannot be reached within ``timeout``.
    """

    def __init__(self, store: dist.Store, rank: int, size: int, length: int, timeout: timedelta) -> None:
        self._rank = rank
        self._size = size
        #: ints per descriptor
        self.length = length
        self._codec = struct.Struct(f"<{length}q")
        self._timeout_s = max(timeout.total_seconds(), 0.001)
        self._peers: dict[int, socket.socket] = {}
        self._broken: str | None = None
        # tickets: calls posted and collected so far; collect waits for its turn on the condition
        self._posted = 0
        self._collected = 0
        self._turn = threading.Condition()
        # the descriptor every rank agreed on in the last recorded call, or None; calls recorded so far
        self._last_agreed: tuple[int, ...] | None = None
        self._recorded = 0
        if size > 1:
            self._connect(store)

    def _connect(self, store: dist.Store) -> None:
        host = local_address()
        try:
            listener = socket.create_server((host, 0), backlog=self._size)
        except OSError as exc:
            if os.environ.get("CATCH_CNCL_CHECK_ADDR"):
                raise ExchangeError(f"cannot listen on CATCH_CNCL_CHECK_ADDR={host!r}: {exc}") from None
            host = "127.0.0.1"  # the host name resolves to an address of another machine (as Gloo, fall back)
            listener = socket.create_server((host, 0), backlog=self._size)
        try:
            listener.settimeout(self._timeout_s)
            store.set(f"cncl_check/{self._rank}", f"{host}:{listener.getsockname()[1]}")
            for peer in range(self._rank):
                addr = store.get(f"cncl_check/{peer}").decode()
                peer_host, port = addr.rsplit(":", 1)
                conn = socket.create_connection((peer_host, int(port)), timeout=self._timeout_s)
                conn.sendall(_HELLO.pack(_MAGIC, self._rank))
                self._peers[peer] = conn
            while len(self._peers) < self._size - 1:
                conn, _ = listener.accept()
                conn.settimeout(self._timeout_s)
                magic, peer = _HELLO.unpack(self._recv_exact(conn, _HELLO.size, "a connecting rank"))
                if magic != _MAGIC or not self._rank < peer < self._size or peer in self._peers:
                    conn.close()  # not one of ours (a stray connection): keep waiting for the real peers
                    continue
                self._peers[peer] = conn
        except (OSError, ExchangeError) as exc:
            self.close()
            raise ExchangeError(f"could not connect the argument-check channel of rank {self._rank}: {exc}") from exc
        finally:
            listener.close()
        for conn in self._peers.values():
            conn.settimeout(self._timeout_s)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def agreed_before_next(self) -> tuple[int, ...] | None:
        """The descriptor every rank agreed on in the previous call, if every posted call has been collected and its
        outcome recorded (:meth:`record`); None otherwise (also when the previous call's ranks disagreed)."""
        with self._turn:
            return self._last_agreed if self._recorded == self._posted else None

    def record(self, agreed: tuple[int, ...] | None) -> None:
        """Record the outcome of the call collected last: the descriptor all ranks agreed on, or None."""
        with self._turn:
            self._last_agreed = agreed
            self._recorded += 1

    def post(self, values: Sequence[int]) -> int:
        """Send this rank's descriptor of the next call to every peer; return its ticket for :meth:`collect`.

        Calls must post in call order (the engine posts when it starts a job, in issue order). A failed send marks
        the channel broken; :meth:`collect` reports it, so the caller gets the error through the collective's work
        like any transport error.
        """
        data = self._codec.pack(*values)
        with self._turn:
            ticket = self._posted
            self._posted += 1
            if self._broken is not None:
                return ticket
            for peer, conn in self._peers.items():
                try:
                    conn.sendall(data)
                except OSError as exc:
                    self._broken = f"sending to rank {peer} failed: {exc}"
                    break
        return ticket

    def collect(self, ticket: int, values: Sequence[int]) -> list[tuple[int, ...]]:
        """Receive every peer's descriptor of the call ``ticket``; return all of them in rank order.

        Waits until the calls posted before it were collected (the n-th message on every connection belongs to
        the n-th call). ``values`` is this rank's own descriptor (as posted). Raises :class:`ExchangeError` when a
        peer closed its connection, did not answer within the timeout, or the channel broke earlier.
        """
        with self._turn:
            self._turn.wait_for(lambda: self._collected == ticket or self._broken is not None)
            try:
                if self._broken is not None:
                    raise ExchangeError(f"argument-check channel unusable: {self._broken}")
                out: list[tuple[int, ...]] = []
                for peer in range(self._size):
                    if peer == self._rank:
                        out.append(tuple(values))
                        continue
                    try:
                        out.append(self._codec.unpack(
                            self._recv_exact(self._peers[peer], self._codec.size, f"rank {peer}")))
                    except ExchangeError as exc:
                        self._broken = str(exc)
                        raise
                return out
            finally:
                self._collected += 1
                self._turn.notify_all()

    def abandon(self, reason: str) -> None:
        """A call failed between its post and its collect: the channel is out of step for good (every later check
        raises naming ``reason``). Used when the transport failed, since the peers are then gone or stuck."""
        with self._turn:
            self._broken = self._broken or reason
            self._turn.notify_all()

    def _recv_exact(self, conn: socket.socket, n: int, who: str) -> bytes:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            try:
                k = conn.recv_into(view[got:])
            except TimeoutError:
                raise ExchangeError(f"timed out waiting for {who} after {self._timeout_s:g} s") from None
            except OSError as exc:
                raise ExchangeError(f"connection to {who} failed: {exc}") from None
            if k == 0:
                raise ExchangeError(f"connection closed by {who}")
            got += k
        return bytes(buf)

    def close(self) -> None:
        """Close every connection (idempotent)."""
        for conn in self._peers.values():
            conn.close()
        self._peers.clear()
        self._broken = self._broken or "closed"
