"""What Plan and Executor share: an owned C handle, released by close(), at
collection, or on leaving a `with` block."""

import ctypes

from ._lib import call, lib


class OwnedHandle:
    """Subclasses name their collc*Destroy function in _destroy and set
    self._handle."""

    _destroy = None

    @property
    def handle(self):
        # A closed handle is passed on as NULL: the C API's refusal names it.
        return self._handle if getattr(self, "_handle", None) else None

    def close(self):
        """Releases the handle now (also done when it is collected). A
        collc.Error while another thread's call uses it (a replay): the
        handle stays open, to close once that call returns."""
        if getattr(self, "_handle", None):
            call(self._destroy, self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        if lib is not None:  # not at interpreter shutdown
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
