"""A small keep-alive HTTP/1.1 client on asyncio streams, for the benchmark's
own load (fan-out, set-up requests). No dependencies; GET only; bodies are
read by Content-Length, which is what Hummingbird sends."""
import asyncio


class Connection:
    def __init__(self, host, port):
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def get(self, path):
        """(status, body bytes). Reconnects once if the server closed the connection."""
        for attempt in range(2):
            if self.writer is None:
                await self.open()
            try:
                self.writer.write(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: bench\r\n\r\n")
                head = await self.reader.readuntil(b"\r\n\r\n")
                status = int(head[9:12])
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                body = await self.reader.readexactly(length) if length else b""
                return status, body
            except (ConnectionError, asyncio.IncompleteReadError):
                self.close()
                if attempt == 1:
                    raise
        raise ConnectionError("unreachable")

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class Pool:
    """A fixed number of connections to one server; `get` waits for a free one."""

    def __init__(self, url, size):
        host, port = url.split("//", 1)[1].split(":")
        self.free = asyncio.Queue()
        for _ in range(size):
            self.free.put_nowait(Connection(host, int(port)))

    async def get(self, path):
        connection = await self.free.get()
        try:
            return await connection.get(path)
        finally:
            self.free.put_nowait(connection)

    def close(self):
        while not self.free.empty():
            self.free.get_nowait().close()


async def gather_limited(pool, paths, concurrency):
    """GETs every path with at most `concurrency` in flight; the answers in order."""
    results = [None] * len(paths)
    index = 0

    async def worker():
        nonlocal index
        while index < len(paths):
            i = index
            index += 1
            results[i] = await pool.get(paths[i])

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return results
