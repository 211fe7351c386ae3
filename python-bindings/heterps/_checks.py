"""Argument checks that name the argument: pybind11 and the builtins would
coerce silently (int(3.5) is 3, bool("no") is True) or fail without naming
which argument was wrong."""

from __future__ import annotations

import math
import numbers
import operator
import os
from typing import Any, List, Sequence

import numpy as np


def integer(name: str, value: Any, minimum: int = -(2 ** 63),
            maximum: int = 2 ** 63) -> int:
    """`value` as an int in [minimum, maximum): floats, strings and bools
    are not counts."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    number = operator.index(value)
    if not minimum <= number < maximum:
        raise ValueError(f"{name}={number} is outside [{minimum}, {maximum})")
    return number


def boolean(name: str, value: Any) -> bool:
    """`value` as a bool: True or False (NumPy's too), not a string or a
    number that would read as one."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def real(name: str, value: Any) -> float:
    """`value` as a finite float: an int or float (NumPy's too), not a
    string or a bool."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {number}")
    return number


def text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {value!r}")
    return value


def texts(name: str, value: Any) -> List[str]:
    """A list or tuple of strings (a single string is not a list of them)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list of strings, got {value!r}")
    for item in value:
        if not isinstance(item, str):
            raise TypeError(f"{name} must be a list of strings, got {value!r}")
    return list(value)


def integers(name: str, value: Any, minimum: int, maximum: int) -> List[int]:
    """A list or tuple of integers in [minimum, maximum)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list of integers, got {value!r}")
    return [integer(name, item, minimum, maximum) for item in value]


def regular_file(path: str) -> None:
    """Raises OSError (strerror "not a regular file") unless `path` is one:
    opening a FIFO blocks until a writer comes, and a device such as
    /dev/zero never ends, as the compiler refuses them too."""
    import errno
    import stat

    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", path)


def path(name: str, value: Any) -> str:
    """`value` as a str path: a str or os.PathLike. The compiler and the
    runtime take UTF-8 paths, so a name that is not UTF-8 (legal on Linux,
    decoded by Python with surrogate escapes) is refused here, by the
    argument's name, before anything is written."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path, got {value!r}")
    text = os.fspath(value)
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a path, got {value!r}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{name} must be a UTF-8 path (the compiler and the "
                         f"runtime take UTF-8 file names), got {text!r}") from None
    return text
