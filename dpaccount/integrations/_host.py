"""The one-line message of an integration whose host library is missing."""
import importlib
from typing import Any


def require(module: str, pip_name: str) -> Any:
    """``importlib.import_module(module)``, or ImportError saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"this integration needs {pip_name}: pip install {pip_name} "
                          f"(or pip install 'dpaccount[interop]')") from None
