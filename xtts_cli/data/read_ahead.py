"""Reading files ahead of a scan that reads them one after the other, when the disk is cold."""

from __future__ import annotations

import os
import stat
import threading
import time


class ReadAhead:
    """Threads that read the first bytes of each file (and a WAV's middle, where the scan looks for
    sound), ahead of a scan that reads them in order (audio headers; LibriTTS and VCTK transcripts).

    The scan is Python and holds the GIL, so it runs on one thread; what it waits for on a cold
    disk is each file's first read. `READ_AHEAD_THREADS` threads, each taking every Nth file, keep
    that many reads in flight and leave the pages in the page cache: a first start's scan of 13,100
    distinct WAV files just dropped from the page cache took 0.96-1.08 s instead of 1.70-1.83 s.
    When the files are already cached the threads only cost (0.45-0.49 s instead of 0.34-0.36 s,
    competing for the GIL), so a few files spread over the list are timed first, and the threads
    start only when those reads took longer than a cached read does (`COLD_READ_SECONDS`)."""

    READ_AHEAD_THREADS = 8
    HEAD_BYTES = 8192  # a header, and what the parse's buffered first read asks for
    # And a WAV's middle, where the scan looks for sound (`audio_headers._check_sound`: a window of
    # 2,048 frames, up to 16 kB, beside the file's middle by half its header).
    MIDDLE_BYTES = 24576
    SAMPLED = 32
    COLD_READ_SECONDS = 50e-6  # a cached read: 2-3 us here; a read from this disk: 100-400 us

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> ReadAhead:
        if len(self.paths) > self.SAMPLED and self._cold():
            for k in range(self.READ_AHEAD_THREADS):
                thread = threading.Thread(target=self._read_every, args=(k,), name=f"xtts-read-ahead-{k}", daemon=True)
                thread.start()
                self._threads.append(thread)
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    @property
    def started(self) -> bool:
        return bool(self._threads)

    def _cold(self) -> bool:
        step = len(self.paths) // self.SAMPLED
        start = time.perf_counter()
        for path in self.paths[step // 2 :: step][: self.SAMPLED]:
            _read_head(path, self.HEAD_BYTES, self.MIDDLE_BYTES)
        return (time.perf_counter() - start) / self.SAMPLED > self.COLD_READ_SECONDS

    def _read_every(self, first: int) -> None:
        for path in self.paths[first :: self.READ_AHEAD_THREADS]:
            if self._stop.is_set():
                return
            _read_head(path, self.HEAD_BYTES, self.MIDDLE_BYTES)


def _read_head(path: str, size: int, middle: int = 0) -> None:
    """The first `size` bytes of `path`, and of a WAV `middle` bytes around its middle, read and
    dropped (they stay in the page cache)."""
    try:
        # Non-blocking: a FIFO in the dataset would block an open for reading until a writer came.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return  # the scan's own read reports it
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):  # a FIFO or a device: the scan reports it, unread
            os.pread(fd, size, 0)
            if middle and path[-4:].lower() == ".wav" and info.st_size > size:
                os.pread(fd, middle, max(size, info.st_size // 2 - middle // 2))
    except OSError:
        pass
    finally:
        os.close(fd)
