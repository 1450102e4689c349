"""Release order of C handles, whatever order Python drops the objects in.

Every Env, Model, Session and Llm owns one Handle. A handle is released only
when its owner has let go of it (close() or garbage collection) *and* no
handle made from it is still alive: sessions go before their model, models
and runners before their env. Python's finalizers run in an arbitrary order
inside a reference cycle that gc.collect() breaks, so the order cannot come
from reference counting alone; it comes from these counts.
"""
import threading

_lock = threading.RLock()
# tests set this to a list to see the order handles are released in: (kind, ptr)
release_log = None


class Handle:
    __slots__ = ("ptr", "kind", "_release", "_parents", "_children", "_dropped")

    def __init__(self, ptr, kind, release, parents=()):
        self.ptr = ptr
        self.kind = kind
        self._release = release
        self._parents = tuple(parents)
        self._children = 0
        self._dropped = False
        with _lock:
            for p in self._parents:
                p._children += 1

    @property
    def alive(self):
        return self.ptr is not None

    def hold(self):
        """Keep the handle alive for a dependant that is not a handle (an output view)."""
        with _lock:
            self._children += 1

    def unhold(self):
        with _lock:
            self._children -= 1
            self._maybe_release()

    def drop(self):
        """The owner is done with it; the C object goes once its dependants have gone."""
        with _lock:
            self._dropped = True
            self._maybe_release()

    def _maybe_release(self):
        if not self._dropped or self._children or self.ptr is None:
            return
        ptr, self.ptr = self.ptr, None
        try:
            if release_log is not None:
                release_log.append((self.kind, ptr))
            self._release(ptr)
        finally:
            for p in self._parents:
                p._children -= 1
                p._maybe_release()
