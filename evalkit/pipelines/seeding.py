"""One seed for a whole pipeline: Python, numpy and, when installed, torch on every device."""
from __future__ import annotations

import importlib.util
import random


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch (all devices) for reproducible training and sampling.

    torch is seeded only when installed (a scoring-only install has none), and
    imported only then.
    """
    import numpy as np

    random.seed(seed)
    np.random.seed(seed % (2**32))
    if importlib.util.find_spec("torch") is None:  # pragma: no cover - scoring-only installs
        return
    import torch

    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
