"""switchyard.Error: a failed call's status code and message, as a Python exception."""
import enum

from . import _lib


class StatusCode(enum.IntEnum):
    """sy_status_code of sy_types.h (values fixed by ABI v1)."""
    OK = 0
    INVALID_ARGUMENT = 1
    NOT_FOUND = 2
    NOT_IMPLEMENTED = 3
    OUT_OF_MEMORY = 4
    IO = 5
    INVALID_MODEL = 6
    INVALID_CONFIG = 7
    PLUGIN = 8
    ABI_MISMATCH = 9
    SHAPE = 10
    TYPE = 11
    UNSUPPORTED = 12
    RUNTIME = 13
    INTERNAL = 14
    CONTEXT_EXHAUSTED = 15
    DYNAMIC_SHAPE = 16
    PIN_MISMATCH = 17
    BUDGET = 18


class Error(Exception):
    """A Switchyard call failed. `code` is a StatusCode (an int), `message` the
    library's text, which says what failed and where."""

    def __init__(self, code, message):
        try:
            code = StatusCode(code)
        except ValueError:
            pass  # a code appended after this package was written stays a plain int
        self.code = code
        self.message = message
        super().__init__(code, message)

    @property
    def code_name(self):
        return "SY_ERR_" + self.code.name if isinstance(self.code, StatusCode) else "code %d" % self.code

    def __str__(self):
        return "%s: %s" % (self.code_name, self.message)


def check(status):
    """Raise Error for a non-NULL sy_status* (and free it); return None for NULL."""
    if not status:
        return
    lib = _lib.lib()
    code = lib.sy_status_get_code(status)
    msg = _lib.text(lib.sy_status_get_message(status)) or ""
    lib.sy_status_free(status)
    raise Error(code, msg)
